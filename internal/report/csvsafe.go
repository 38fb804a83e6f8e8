package report

import (
	"encoding/csv"
	"io"
	"strconv"
)

// safeCSV is a csv.Writer whose cells are safe to open in a spreadsheet: a
// text cell that would start a formula (=, +, -, @, tab, carriage return;
// OWASP "CSV injection") gets a leading ', which spreadsheets show as text.
// Numbers (-1.5, +3) stay numbers.
type safeCSV struct{ *csv.Writer }

func newSafeCSV(w io.Writer) safeCSV { return safeCSV{csv.NewWriter(w)} }

// Write writes one row with every cell made safe.
func (c safeCSV) Write(row []string) error {
	out := make([]string, len(row))
	for i, v := range row {
		out[i] = safeCell(v)
	}
	return c.Writer.Write(out)
}

func safeCell(v string) string {
	if v == "" {
		return v
	}
	switch v[0] {
	case '=', '+', '-', '@', '\t', '\r':
		if _, err := strconv.ParseFloat(v, 64); err == nil && v[0] != '\t' && v[0] != '\r' {
			return v
		}
		return "'" + v
	}
	return v
}

// SafeCSVCell is v made safe to open in a spreadsheet, as every cell of
// pgarena's CSV exports (for CSV written outside this package).
func SafeCSVCell(v string) string { return safeCell(v) }
