package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/pgarena/pgarena/internal/report"
	"github.com/pgarena/pgarena/internal/report/htmlw"
	"github.com/pgarena/pgarena/internal/store"
)

// maxSelection bounds the runs of one compare or download request.
const maxSelection = 50

// selection loads the runs ?run= names, in order (the first is the baseline).
func (s *Server) selection(r *http.Request) ([]*store.Run, error) {
	refs := r.URL.Query()["run"]
	if len(refs) == 0 {
		return nil, fmt.Errorf("select runs: ?run=ID&run=ID")
	}
	if len(refs) > maxSelection {
		return nil, fmt.Errorf("at most %d runs at once, got %d", maxSelection, len(refs))
	}
	runs := make([]*store.Run, 0, len(refs))
	for _, ref := range refs {
		run, _, err := s.runs.load(ref, false)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	return runs, nil
}

// selectionQuery is the query naming runs, for links.
func selectionQuery(runs []*store.Run) string {
	v := url.Values{}
	for _, r := range runs {
		v.Add("run", r.ID)
	}
	return v.Encode()
}

// writeCompareTop writes the compare page's section above the report: what
// refuses or warns against the comparison, the verdict metrics, the table.
func writeCompareTop(w *htmlw.Writer, refuse string, warnings, metrics []string, query, text string) {
	w.S("<section class=\"serve-compare\" style=\"padding:0 1em\">\n<h2>Comparison with the noise band</h2>\n")
	if refuse != "" {
		w.Elem(`<p class="note interrupted">`, refuse, "</p>")
	}
	w.S("\n")
	w.Elems(`<p class="note">warning: `, "</p>", warnings...)
	w.S("\n<p>verdict metric: ")
	for _, m := range metrics {
		w.S(`<a href="/compare?`)
		w.URLPath(query)
		w.S("&amp;metric=")
		w.URLQuery(m)
		w.Elem(`">`, m, "</a> ")
	}
	w.S("</p>\n")
	w.Elem(`<pre id="compare-text">`, text, "</pre>\n</section>\n")
}

// handleCompare shows the selected runs side by side: the compare table with
// each group's confidence interval and verdict (as pgarena compare prints
// it), then the report of all of them (overlaid charts). Its URL is the view.
func (s *Server) handleCompare(w http.ResponseWriter, r *http.Request) {
	runs, err := s.selection(r)
	if err != nil {
		runError(w, err)
		return
	}
	m, ok := report.MetricByKey(r.URL.Query().Get("metric"))
	if !ok {
		m = report.Metrics[0]
	}
	groups := make([]*report.Group, len(runs))
	for i, run := range runs {
		name := run.ID
		if run.Spec.Label != "" {
			name += " [" + run.Spec.Label + "]"
		}
		groups[i] = &report.Group{Name: name, Runs: []*store.Run{run}}
	}
	if m.Figure != "" && !report.HasFigure(groups, m.Figure) {
		m = report.Metrics[0]
	}
	var text bytes.Buffer
	if len(groups) > 1 {
		report.CompareText(&text, groups, m)
	} else {
		text.WriteString("select at least two runs to compare")
	}
	refuse, warnings := report.Comparability(runs)
	var keys []string
	for _, mm := range report.Metrics {
		if mm.Figure == "" || report.HasFigure(groups, mm.Figure) {
			keys = append(keys, mm.Key)
		}
	}
	q := selectionQuery(runs)
	var top htmlw.Writer
	writeCompareTop(&top, strings.TrimSuffix(refuse, " (use --force to compare anyway)"), warnings, keys, q, text.String())
	s.writeReport(w, runs, q, reportParts{top: top.Bytes()})
}

// handleDownload sends a selection as a file: the self-contained HTML
// report, the CSV export, the JSON export (every interval and histogram)
// or a zip of the PNG charts.
func (s *Server) handleDownload(w http.ResponseWriter, r *http.Request) {
	runs, err := s.selection(r)
	if err != nil {
		runError(w, err)
		return
	}
	name := "pgarena-" + runs[0].ID
	if len(runs) > 1 {
		name = fmt.Sprintf("pgarena-%d-runs", len(runs))
	}
	var buf bytes.Buffer
	format := r.PathValue("format")
	switch format {
	case "html":
		err = report.HTML(&buf, runs)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	case "csv":
		err = report.WriteCSV(&buf, runs)
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	case "json":
		err = writeJSONExport(&buf, runs)
		w.Header().Set("Content-Type", "application/json")
	case "png":
		err = s.writePNGZip(&buf, runs)
		w.Header().Set("Content-Type", "application/zip")
		format = "png.zip"
	default:
		http.Error(w, "download: html, csv, json or png", http.StatusNotFound)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name+"."+format))
	_, _ = w.Write(buf.Bytes())
}

// writeJSONExport writes a JSON array of the runs' exports (report.RunExport).
func writeJSONExport(buf *bytes.Buffer, runs []*store.Run) error {
	out := make([]*report.RunExport, len(runs))
	for i, r := range runs {
		hists, err := r.Histograms()
		if err != nil {
			return fmt.Errorf("run %s: %w", r.ID, err)
		}
		if out[i], err = report.NewRunExport(r, hists); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(buf)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
