package tpcc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Statements of order-status (clause 2.6.2.2).
const (
	orderStatusCustomer       = `select c_balance, c_first, c_middle, c_last from customer where c_w_id = $1 and c_d_id = $2 and c_id = $3`
	orderStatusCustomerByLast = `select c_id, c_balance, c_first, c_middle from customer
where c_w_id = $1 and c_d_id = $2 and c_last = $3 order by c_first`
	orderStatusOrder = `select o_id, o_entry_d, o_carrier_id from orders
where o_w_id = $1 and o_d_id = $2 and o_c_id = $3 order by o_id desc limit 1`
	orderStatusLines = `select ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d from order_line
where ol_w_id = $1 and ol_d_id = $2 and ol_o_id = $3`
)

// orderStatus is the Order-Status transaction (clause 2.6), read-only.
//
// Input (2.6.1): the terminal's warehouse, a random district, the customer
// by last name in 60% of cases (position ceil(n/2) by C_FIRST), else by
// NURand(1023, 1, 3000). It reads the customer's last order and its lines.
func (wk *worker) orderStatus(ctx context.Context, conn *pgx.Conn) error {
	w := wk.warehouse()
	d := wk.district()
	byName := wk.rng.IntN(100) < 60
	var last string
	cid := 0
	if byName {
		last = wk.customerLast()
	} else {
		cid = wk.customerID()
	}
	return wk.orderStatusOf(ctx, conn, w, d, cid, last)
}

// orderStatusOf runs order-status for the customer cid (0: by last) of
// warehouse w, district d. A customer without orders is no failure: the
// load gives each customer one (clause 4.3.3.1), but a database loaded
// otherwise (HammerDB's) may have customers without; the transaction then
// reports the customer and no order, as read-only work done.
func (wk *worker) orderStatusOf(ctx context.Context, conn *pgx.Conn, w, d, cid int, last string) error {
	byName := cid == 0
	if wk.w.storedProcs {
		return wk.orderStatusProc(ctx, conn, w, d, cid, last)
	}

	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	var (
		balance       float64
		first, middle string
		cidSel        int32
	)
	if byName {
		rows, err := tx.Query(ctx, orderStatusCustomerByLast, w, d, last)
		if err != nil {
			return fmt.Errorf("customer: %w", err)
		}
		type cust struct {
			id            int32
			balance       float64
			first, middle string
		}
		var cs []cust
		var c cust
		if _, err := pgx.ForEachRow(rows, []any{&c.id, &c.balance, &c.first, &c.middle}, func() error {
			cs = append(cs, c)
			return nil
		}); err != nil {
			return fmt.Errorf("customer: %w", err)
		}
		if len(cs) == 0 {
			return fmt.Errorf("no customer named %s in warehouse %d district %d", last, w, d)
		}
		c = cs[(len(cs)+1)/2-1]
		cidSel, balance, first, middle = c.id, c.balance, c.first, c.middle
	} else {
		cidSel = int32(cid)
		if err := tx.QueryRow(ctx, orderStatusCustomer, w, d, cid).Scan(&balance, &first, &middle, &last); err != nil {
			return fmt.Errorf("customer: %w", err)
		}
	}
	var (
		oid     int32
		entry   time.Time
		carrier *int16
	)
	err = tx.QueryRow(ctx, orderStatusOrder, w, d, cidSel).Scan(&oid, &entry, &carrier)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		// no order: nothing more to read
	case err != nil:
		return fmt.Errorf("orders of customer %d: %w", cidSel, err)
	default:
		rows, err := tx.Query(ctx, orderStatusLines, w, d, oid)
		if err != nil {
			return fmt.Errorf("order_line: %w", err)
		}
		// nullable: HammerDB commits the lines of its unused-item orders
		// with a null OL_AMOUNT
		var (
			item, supply *int32
			qty          *int16
			amount       *float64
			delivered    *time.Time
		)
		if _, err := pgx.ForEachRow(rows, []any{&item, &supply, &qty, &amount, &delivered}, func() error { return nil }); err != nil {
			return fmt.Errorf("order_line: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
