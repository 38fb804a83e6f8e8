package tpcc

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// deliveryDistrict delivers the oldest undelivered order of one district
// (clause 2.7.4.2) in one statement: it deletes the new_order row with the
// lowest NO_O_ID, sets O_CARRIER_ID of that order, sets OL_DELIVERY_D of
// its lines, and adds the sum of their OL_AMOUNT to the customer's
// C_BALANCE and 1 to C_DELIVERY_CNT. It returns the order number, or no
// row when the district has no undelivered order (the district is then
// skipped, as 2.7.4.2 allows).
const deliveryDistrict = `with no as (
	delete from new_order where no_w_id = $1 and no_d_id = $2
	and no_o_id = (select min(no_o_id) from new_order where no_w_id = $1 and no_d_id = $2)
	returning no_o_id
), o as (
	update orders set o_carrier_id = $3 from no
	where o_w_id = $1 and o_d_id = $2 and o_id = no.no_o_id
	returning o_id, o_c_id
), ol as (
	update order_line set ol_delivery_d = current_timestamp from o
	where ol_w_id = $1 and ol_d_id = $2 and ol_o_id = o.o_id
	returning ol_amount
)
update customer set c_balance = c_balance + (select coalesce(sum(ol_amount), 0) from ol),
	c_delivery_cnt = c_delivery_cnt + 1
from o where c_w_id = $1 and c_d_id = $2 and c_id = o.o_c_id
returning o.o_id`

// delivery is the Delivery transaction (clause 2.7): one order per
// district, all 10 districts of the warehouse, in one database
// transaction, sent as one pipeline. The specification lets delivery run deferred (queued,
// 2.7.2); pgarena runs it in line and measures it as any other.
//
// Input (2.7.1): the terminal's warehouse and O_CARRIER_ID random in
// [1, 10].
func (wk *worker) delivery(ctx context.Context, conn *pgx.Conn) error {
	return wk.deliveryOf(ctx, conn, wk.warehouse(), 1+wk.rng.IntN(10))
}

// deliveryOf runs the Delivery transaction for warehouse w and carrier.
func (wk *worker) deliveryOf(ctx context.Context, conn *pgx.Conn, w, carrier int) error {
	if wk.w.storedProcs {
		return wk.deliveryProc(ctx, conn, w, carrier)
	}
	// One round trip: the ten district statements are independent, so
	// they go in one pipeline between BEGIN and COMMIT.
	var b pgx.Batch
	b.Queue("begin")
	for d := 1; d <= districtsPerWH; d++ {
		b.Queue(deliveryDistrict, w, d, carrier)
	}
	b.Queue("commit")
	br := conn.SendBatch(ctx, &b)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return fmt.Errorf("begin: %w", err)
	}
	for d := 1; d <= districtsPerWH; d++ {
		rows, err := br.Query()
		if err != nil {
			_ = br.Close()
			return fmt.Errorf("district %d: %w", d, err)
		}
		var oid int32
		if _, err := pgx.ForEachRow(rows, []any{&oid}, func() error { return nil }); err != nil {
			_ = br.Close()
			return fmt.Errorf("district %d: %w", d, err)
		}
	}
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return fmt.Errorf("commit: %w", err)
	}
	if err := br.Close(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
