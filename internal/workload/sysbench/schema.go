package sysbench

import (
	"fmt"
	"math/rand/v2"

	"github.com/pgarena/pgarena/internal/workload"
)

// batchRows is the number of rows per batch.
const batchRows = 10000

// Tables implements workload.Workload: sysbench's create_table
// (oltp_common.lua) in its pgsql dialect,
//
//	CREATE TABLE sbtestN(
//	  id SERIAL,                      -- INTEGER NOT NULL with --auto-inc=off
//	  k INTEGER DEFAULT '0' NOT NULL,
//	  c CHAR(120) DEFAULT '' NOT NULL,
//	  pad CHAR(60) DEFAULT '' NOT NULL,
//	  PRIMARY KEY (id))
//	CREATE INDEX k_N ON sbtestN(k)    -- --create-secondary, the default
//
// with the primary key added after loading (same constraint, sbtestN_pkey)
// and the SERIAL's sequence set past the loaded ids, so that inserts
// without an id (oltp_insert) continue after them as after sysbench's
// prepare. Rows are sysbench's: id 1..--table-size, k drawn from the
// --rand-type distribution over [1, table-size], c and pad groups of 11
// random digits joined by '-' (10 and 5 groups). oltp_insert with
// --auto-inc=off starts from empty tables, as its prepare does.
//
// --secondary on pgsql: sysbench's "KEY xid (id)" is MySQL syntax and fails
// on PostgreSQL; pgarena makes the non-unique index xid_N on id instead.
func (w *Workload) Tables() []workload.Table {
	size := int64(w.tableSize)
	if w.test == TestInsert && !w.autoInc {
		size = 0
	}
	idDef := "SERIAL"
	if !w.autoInc {
		idDef = "INTEGER NOT NULL"
	}
	dist := w.dist
	if dist.kind == "" {
		dist, _ = newDistribution(w.randType, w.randSpecIter, w.randSpecPct, w.randSpecRes, w.randParetoH)
	}
	out := make([]workload.Table, w.tables)
	for i := range out {
		n := i + 1
		name := tableName(n)
		t := workload.Table{
			Name: name,
			Create: []string{fmt.Sprintf("CREATE TABLE %s(\n  id %s,\n  k INTEGER DEFAULT '0' NOT NULL,\n"+
				"  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL\n)", name, idDef)},
			Columns: []string{"id", "k", "c", "pad"},
			Rows:    w.sliceRows(rows(w.seed, n, size, int64(w.tableSize), &dist)),
		}
		if w.secondary {
			t.PostLoad = append(t.PostLoad, fmt.Sprintf("CREATE INDEX xid_%d ON %s(id)", n, name))
		} else {
			t.PostLoad = append(t.PostLoad, fmt.Sprintf("ALTER TABLE %s ADD PRIMARY KEY (id)", name))
		}
		if w.createSecondary {
			t.PostLoad = append(t.PostLoad, fmt.Sprintf("CREATE INDEX k_%d ON %s(k)", n, name))
		}
		if w.autoInc && size > 0 {
			t.PostLoad = append(t.PostLoad, fmt.Sprintf("SELECT setval(pg_get_serial_sequence('%s', 'id'), %d)", name, size))
		}
		// what was loaded, for runs and check without --table-size
		t.PostLoad = append(t.PostLoad, fmt.Sprintf("COMMENT ON COLUMN %s.id IS '%s%d'", name, loadMark, size))
		out[i] = t
	}
	return out
}

// rows generates table n's rows: batch i of a table is a pure function of
// (seed, n, i). k is drawn over [1, kMax].
func rows(seed uint64, n int, total, kMax int64, dist *distribution) workload.Batches {
	return workload.Batches{
		N:    int((total + batchRows - 1) / batchRows),
		Rows: total,
		Fill: func(i int, dst [][]any) [][]any {
			rng := rand.New(rand.NewPCG(seed, uint64(n)<<32|uint64(i)))
			first := int64(i)*batchRows + 1
			last := min(first+batchRows-1, total)
			// one buffer for the batch's c and pad values, sliced per row
			text := make([]byte, 0, (last-first+1)*(cLen+padLen))
			dst = dst[:0]
			for id := first; id <= last; id++ {
				r := workload.NextRow(dst, 4)
				k := dist.draw(rng, 1, uint32(kMax))
				at := len(text)
				text = appendGroups(text, rng, cGroups)
				c := text[at:len(text):len(text)]
				at = len(text)
				text = appendGroups(text, rng, padGroups)
				pad := text[at:len(text):len(text)]
				r[0], r[1], r[2], r[3] = int32(id), int32(k), c, pad
				dst = append(dst, r)
			}
			return dst
		},
	}
}
