package tpcb

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/workload"
)

// batchRows is the number of rows per batch: small enough to spread a
// table over the loader's connections, large enough to keep per-batch
// overhead negligible.
const batchRows = 10000

// Tables implements workload.Workload: pgbench 15's schema (initCreateTables
// and createPartitions in pgbench.c), in its creation order.
//
// The DDL is pgbench's: "tid int, bid int, ..." with "with (fillfactor=N)"
// on tellers, accounts and branches (and on each partition, while the
// partitioned parent has none), aid bigint from scale 20000 on, and
// "unlogged" with --unlogged (with --partitions on PostgreSQL 18 and later,
// as pgbench 18, on the partitions only: 18 refuses an unlogged partitioned
// table, and pgbench 18's initCreateTables then creates its four tables
// logged). Rows are pgbench's client-side generated data
// (initGenerateDataClientSide): balances 0, branches' and tellers' filler
// NULL (not inserted), accounts' filler ” which char(84) pads with blanks;
// teller t belongs to branch (t-1)/10+1, account a to branch
// (a-1)/100000+1. pgbench_history starts empty. Primary keys are added after
// loading, as pgbench's "p" init step, with its statements.
func (w *Workload) Tables() []workload.Table {
	scale := int64(w.scale)
	aidType := "int"
	if w.scale >= bigintScale {
		aidType = "bigint"
	}
	create, partCreate := "create table ", "create table "
	if w.unlogged {
		partCreate = "create unlogged table "
		if w.partitions == 0 || w.serverNum < 180000 {
			create = partCreate
		}
	}
	ff := fmt.Sprintf(" with (fillfactor=%d)", w.fillfactor)

	accounts := workload.Table{
		Name:     "pgbench_accounts",
		Columns:  []string{"aid", "bid", "abalance", "filler"},
		Rows:     accountRows(scale),
		PostLoad: []string{"alter table pgbench_accounts add primary key (aid)"},
	}
	accountsDDL := create + "pgbench_accounts(aid " + aidType + " not null,bid int,abalance int,filler char(84))"
	if w.partitions > 0 {
		accounts.Create = []string{accountsDDL + " partition by range (aid)"}
		// createPartitions: part_size rounds up so the last partition may
		// be short; the first and last are open-ended.
		n := int64(w.partitions)
		partSize := (accountsPerScale*scale + n - 1) / n
		for p := int64(1); p <= n; p++ {
			from, to := "minvalue", "maxvalue"
			if p > 1 {
				from = fmt.Sprint((p-1)*partSize + 1)
			}
			if p < n {
				to = fmt.Sprint(p*partSize + 1)
			}
			name := fmt.Sprintf("pgbench_accounts_%d", p)
			ddl := partCreate + name + " partition of pgbench_accounts for values from (" + from + ") to (" + to + ")"
			ddl += ff
			accounts.Create = append(accounts.Create, ddl)
			accounts.Children = append(accounts.Children, name)
		}
	} else {
		accounts.Create = []string{accountsDDL + ff}
	}

	return []workload.Table{
		{
			Name:   "pgbench_history",
			Create: []string{create + "pgbench_history(tid int,bid int,aid " + aidType + ",delta int,mtime timestamp,filler char(22))"},
		},
		{
			Name:     "pgbench_tellers",
			Create:   []string{create + "pgbench_tellers(tid int not null,bid int,tbalance int,filler char(84))" + ff},
			Columns:  []string{"tid", "bid", "tbalance"},
			Rows:     tellerRows(scale),
			PostLoad: []string{"alter table pgbench_tellers add primary key (tid)"},
		},
		accounts,
		{
			Name:     "pgbench_branches",
			Create:   []string{create + "pgbench_branches(bid int not null,bbalance int,filler char(88))" + ff},
			Columns:  []string{"bid", "bbalance"},
			Rows:     branchRows(scale),
			PostLoad: []string{"alter table pgbench_branches add primary key (bid)"},
		},
	}
}

// PrepareInit implements workload.InitPreparer: the server's version
// decides the DDL of --unlogged with --partitions (Tables).
func (w *Workload) PrepareInit(ctx context.Context, conn *pgx.Conn) error {
	if err := conn.QueryRow(ctx, "select current_setting('server_version_num')::int").Scan(&w.serverNum); err != nil {
		return fmt.Errorf("tpcb: read the server version: %w", err)
	}
	return nil
}

// batches splits total rows into batches of batchRows and calls row for
// each row number (1-based) of batch i to fill a reused row slice.
func batches(total int64, width int, row func(n int64, r []any)) workload.Batches {
	return workload.Batches{
		N:    int((total + batchRows - 1) / batchRows),
		Rows: total,
		Fill: func(i int, dst [][]any) [][]any {
			first := int64(i)*batchRows + 1
			last := min(first+batchRows-1, total)
			dst = dst[:0]
			for n := first; n <= last; n++ {
				r := workload.NextRow(dst, width)
				row(n, r)
				dst = append(dst, r)
			}
			return dst
		},
	}
}

func branchRows(scale int64) workload.Batches {
	return batches(branchesPerScale*scale, 2, func(bid int64, r []any) {
		r[0], r[1] = int32(bid), int32(0)
	})
}

func tellerRows(scale int64) workload.Batches {
	return batches(tellersPerScale*scale, 3, func(tid int64, r []any) {
		r[0], r[1], r[2] = int32(tid), int32((tid-1)/tellersPerScale+1), int32(0)
	})
}

func accountRows(scale int64) workload.Batches {
	big := scale >= bigintScale
	return batches(accountsPerScale*scale, 4, func(aid int64, r []any) {
		if big {
			r[0] = aid
		} else {
			r[0] = int32(aid)
		}
		r[1], r[2], r[3] = int32((aid-1)/accountsPerScale+1), int32(0), ""
	})
}
