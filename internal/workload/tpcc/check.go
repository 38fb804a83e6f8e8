package tpcc

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtext"
	"github.com/pgarena/pgarena/internal/workload"
)

// consistency are the conditions of clause 3.3.2.1-3.3.2.4. Each query
// returns the first warehouse (and district) that breaks the condition and
// the values found, or no row.
var consistency = []struct {
	name  string
	query string
}{
	{
		// 3.3.2.1: W_YTD = sum(D_YTD)
		"condition 1 (W_YTD = sum(D_YTD))",
		`select w.w_id, 0, format('w_ytd = %s, sum(d_ytd) = %s', w.w_ytd, s.ytd)
		from warehouse w join (select d_w_id, sum(d_ytd) ytd from district group by d_w_id) s on s.d_w_id = w.w_id
		where w.w_ytd <> s.ytd order by 1 limit 1`,
	},
	{
		// 3.3.2.2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)
		"condition 2 (D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID))",
		`select d.d_w_id, d.d_id, format('d_next_o_id - 1 = %s, max(o_id) = %s, max(no_o_id) = %s', d.d_next_o_id - 1, o.m, n.m)
		from district d
		left join (select o_w_id, o_d_id, max(o_id) m from orders group by 1, 2) o on o.o_w_id = d.d_w_id and o.o_d_id = d.d_id
		left join (select no_w_id, no_d_id, max(no_o_id) m from new_order group by 1, 2) n on n.no_w_id = d.d_w_id and n.no_d_id = d.d_id
		where d.d_next_o_id - 1 is distinct from o.m or (n.m is not null and n.m <> o.m)
		order by 1, 2 limit 1`,
	},
	{
		// 3.3.2.3: max(NO_O_ID) - min(NO_O_ID) + 1 = count(new_order rows)
		"condition 3 (max(NO_O_ID) - min(NO_O_ID) + 1 = rows in new_order)",
		`select no_w_id, no_d_id, format('max - min + 1 = %s, count = %s', max(no_o_id) - min(no_o_id) + 1, count(*))
		from new_order group by 1, 2 having max(no_o_id) - min(no_o_id) + 1 <> count(*) order by 1, 2 limit 1`,
	},
	{
		// 3.3.2.4: sum(O_OL_CNT) = rows in order_line
		"condition 4 (sum(O_OL_CNT) = rows in order_line)",
		`select o.o_w_id, o.o_d_id, format('sum(o_ol_cnt) = %s, order_line rows = %s', o.s, l.c)
		from (select o_w_id, o_d_id, sum(o_ol_cnt) s from orders group by 1, 2) o
		full join (select ol_w_id, ol_d_id, count(*) c from order_line group by 1, 2) l on l.ol_w_id = o.o_w_id and l.ol_d_id = o.o_d_id
		where o.s is distinct from l.c order by 1, 2 limit 1`,
	},
}

// Check implements workload.Checker: the consistency conditions 1 to 4 of
// clause 3.3.2, each over the whole database, all in one repeatable-read
// transaction so that they see one snapshot. Its error names the
// condition, the first warehouse and district that break it, and the
// values found.
func (w *Workload) Check(ctx context.Context, conn pgtext.Querier) (err error) {
	pc, err := workload.PgxConn(conn)
	if err != nil {
		return fmt.Errorf("tpcc check: %w", err)
	}
	tx, err := pc.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("tpcc check: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var n int
	if err := tx.QueryRow(ctx, "select count(*) from warehouse").Scan(&n); err != nil {
		return fmt.Errorf("tpcc check: %w", err)
	}
	if n == 0 {
		return errors.New("tpcc check: table warehouse is empty")
	}
	for _, c := range consistency {
		var (
			wid, did int32
			detail   string
		)
		err := tx.QueryRow(ctx, c.query).Scan(&wid, &did, &detail)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			continue
		case err != nil:
			return fmt.Errorf("tpcc check: %s: %w", c.name, err)
		case did == 0:
			return fmt.Errorf("tpcc check: %s fails for warehouse %d: %s", c.name, wid, detail)
		default:
			return fmt.Errorf("tpcc check: %s fails for warehouse %d district %d: %s", c.name, wid, did, detail)
		}
	}
	return nil
}
