package tpcc

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/randgen"
)

// Statements of payment (clause 2.5.2.2). Amounts are passed in cents.
const (
	paymentWarehouse = `update warehouse set w_ytd = w_ytd + $2::bigint * 0.01 where w_id = $1
returning w_name, w_street_1, w_street_2, w_city, w_state, w_zip`
	paymentDistrict = `update district set d_ytd = d_ytd + $3::bigint * 0.01 where d_w_id = $1 and d_id = $2
returning d_name, d_street_1, d_street_2, d_city, d_state, d_zip`
	// For a customer with bad credit (C_CREDIT = "BC") the payment's
	// identifiers are inserted at the left of C_DATA, which is truncated
	// to 500 characters.
	paymentCustomer = `update customer set c_balance = c_balance - $4::bigint * 0.01,
	c_ytd_payment = c_ytd_payment + $4::bigint * 0.01, c_payment_cnt = c_payment_cnt + 1,
	c_data = case when c_credit = 'BC' then left($5::text || c_data, 500) else c_data end
where c_w_id = $1 and c_d_id = $2 and c_id = $3
returning c_first, c_middle, c_last, c_credit, c_balance`
	paymentHistory = `insert into history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data)
values ($1, $2, $3, $4, $5, current_timestamp, $6::bigint * 0.01, $7)`
)

// paymentInput is the input of one payment (clause 2.5.1); c = 0 selects
// the customer by last.
type paymentInput struct {
	w, d, cw, cd, c int
	last            string
	amount          int64 // cents
}

func (wk *worker) paymentInput() paymentInput {
	rng := wk.rng
	in := paymentInput{w: wk.warehouse(), d: wk.district()}
	in.cw, in.cd = in.w, in.d
	if rng.IntN(100) < 15 && wk.w.warehouses > 1 {
		in.cw, in.cd = wk.otherWarehouse(in.w), wk.district()
	}
	if rng.IntN(100) < 60 {
		in.last = wk.customerLast()
	} else {
		in.c = wk.customerID()
	}
	in.amount = randgen.Uniform(rng, 100, 500000)
	return in
}

// payment is the Payment transaction (clause 2.5).
//
// Input (2.5.1): the terminal's warehouse, a random district; in 85% of
// cases the customer belongs to them, in 15% to a random district of
// another warehouse (2.5.1.2); 60% select the customer by last name
// (NURand(255, 0, 999) with the run's C), 40% by number (NURand(1023, 1,
// 3000)); H_AMOUNT is random in [1.00, 5000.00] (2.5.1.3).
func (wk *worker) payment(ctx context.Context, conn *pgx.Conn) error {
	return wk.paymentOf(ctx, conn, wk.paymentInput())
}

// paymentOf runs the Payment transaction for the input in.
func (wk *worker) paymentOf(ctx context.Context, conn *pgx.Conn, in paymentInput) error {
	if wk.w.storedProcs {
		return wk.paymentProc(ctx, conn, in)
	}
	w, d, cw, cd, cid, last, amount := in.w, in.d, in.cw, in.cd, in.c, in.last, in.amount
	byName := cid == 0

	// Two round trips: BEGIN, warehouse, district (and the customers of
	// the last name) in one pipeline, then customer, history and COMMIT.
	var b pgx.Batch
	b.Queue("begin")
	b.Queue(paymentWarehouse, w, amount)
	b.Queue(paymentDistrict, w, d, amount)
	if byName {
		b.Queue(customersByLast, cw, cd, last)
	}
	br := conn.SendBatch(ctx, &b)
	var wName, wS1, wS2, wCity, wState, wZip string
	var dName, dS1, dS2, dCity, dState, dZip string
	err := func() error {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		if err := br.QueryRow().Scan(&wName, &wS1, &wS2, &wCity, &wState, &wZip); err != nil {
			return fmt.Errorf("warehouse: %w", err)
		}
		if err := br.QueryRow().Scan(&dName, &dS1, &dS2, &dCity, &dState, &dZip); err != nil {
			return fmt.Errorf("district: %w", err)
		}
		if byName {
			var err error
			if cid, err = middleCustomer(br, cw, cd, last); err != nil {
				return err
			}
		}
		return nil
	}()
	if cerr := br.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// clause 2.5.2.2: C_ID, C_D_ID, C_W_ID, D_ID, W_ID and H_AMOUNT
	cdata := strconv.Itoa(cid) + " " + strconv.Itoa(cd) + " " + strconv.Itoa(cw) + " " + strconv.Itoa(d) + " " +
		strconv.Itoa(w) + " " + strconv.FormatFloat(float64(amount)/100, 'f', 2, 64) + " "
	var (
		cFirst, cMiddle, cLast, cCredit string
		cBalance                        float64
	)
	b = pgx.Batch{}
	b.Queue(paymentCustomer, cw, cd, cid, amount, cdata)
	// H_DATA: W_NAME and D_NAME separated by 4 spaces (2.5.2.2)
	b.Queue(paymentHistory, cd, cw, cid, d, w, amount, wName+"    "+dName)
	b.Queue("commit")
	br = conn.SendBatch(ctx, &b)
	err = func() error {
		if err := br.QueryRow().Scan(&cFirst, &cMiddle, &cLast, &cCredit, &cBalance); err != nil {
			return fmt.Errorf("customer: %w", err)
		}
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("history: %w", err)
		}
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		return nil
	}()
	if cerr := br.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return nil
}
