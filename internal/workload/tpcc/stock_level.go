package tpcc

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// stockLevelQuery counts the distinct items of the last 20 orders of the
// district whose stock in the warehouse is below the threshold (clause
// 2.8.2.2), reading D_NEXT_O_ID in the same statement.
const stockLevelQuery = `select count(distinct s.s_i_id)
from district d
join order_line ol on ol.ol_w_id = d.d_w_id and ol.ol_d_id = d.d_id
	and ol.ol_o_id < d.d_next_o_id and ol.ol_o_id >= d.d_next_o_id - 20
join stock s on s.s_w_id = ol.ol_w_id and s.s_i_id = ol.ol_i_id
where d.d_w_id = $1 and d.d_id = $2 and s.s_quantity < $3`

// stockLevel is the Stock-Level transaction (clause 2.8), read-only, one
// statement (its own transaction).
//
// Input (2.8.1): the terminal's warehouse and district (fixed per
// terminal, 2.8.1.2) and a threshold random in [10, 20].
func (wk *worker) stockLevel(ctx context.Context, conn *pgx.Conn) error {
	w, d := wk.homeW, wk.homeD
	if wk.w.allWarehouses {
		w, d = wk.warehouse(), wk.district()
	}
	threshold := 10 + wk.rng.IntN(11)
	if wk.w.storedProcs {
		return wk.stockLevelProc(ctx, conn, w, d, threshold)
	}
	var lowStock int64
	if err := conn.QueryRow(ctx, stockLevelQuery, w, d, threshold).Scan(&lowStock); err != nil {
		return fmt.Errorf("count: %w", err)
	}
	return nil
}
