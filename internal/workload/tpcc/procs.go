package tpcc

import (
	"context"
	"errors"
	"sort"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgarena/pgarena/internal/workload"
)

// Stored-procedure mode (--stored-procs): each transaction is one call of
// a PL/pgSQL function, one round trip, as HammerDB runs TPROC-C on
// PostgreSQL by default. The functions are created at init (after the
// load, with the keys) under names of pgarena's own, so they never replace
// HammerDB's. The input is drawn by the client exactly as in client-side
// mode; the functions do what the client-side statements do.

// errcodeRollback is the SQLSTATE the new-order function raises for the
// unused item of clause 2.4.2.3; the statement fails, so its implicit
// transaction is rolled back, and the client counts a rollback.
const errcodeRollback = "TPC01"

// procSignatures are the functions --stored-procs needs, for Prepare.
var procSignatures = []string{
	"pgarena_tpcc_new_order(int,int,int,int[],int[],int[])",
	"pgarena_tpcc_payment(int,int,int,int,int,text,numeric)",
	"pgarena_tpcc_order_status(int,int,int,text)",
	"pgarena_tpcc_delivery(int,int)",
	"pgarena_tpcc_stock_level(int,int,int)",
}

// Functions implements workload.Functioner: the functions of
// --stored-procs and HammerDB's routines (hammerdb.go), which init always
// creates.
func (w *Workload) Functions() []workload.Function {
	var fns []workload.Function
	for i, sig := range procSignatures {
		fns = append(fns, workload.Function{Signature: sig, Create: procDDL[i]})
	}
	for i, sig := range hammerdbSignatures {
		fns = append(fns, workload.Function{Signature: sig, Create: hammerdbDDL.Get()[i]})
	}
	return fns
}

// procDDL creates the functions.
var procDDL = []string{
	// New-Order, clause 2.4.2.2; lines are processed in the order given.
	`create or replace function pgarena_tpcc_new_order(p_w int, p_d int, p_c int, p_items int[], p_supply int[], p_qty int[])
returns int language plpgsql as $$
declare
	v_n int := array_length(p_items, 1);
	v_o_id int; v_d_tax numeric; v_w_tax numeric; v_discount numeric; v_last text; v_credit text;
	v_price numeric; v_name text; v_idata text; v_squant int; v_sdata text; v_dist text;
	v_total numeric := 0;
begin
	update district set d_next_o_id = d_next_o_id + 1 where d_w_id = p_w and d_id = p_d
		returning d_next_o_id - 1, d_tax into v_o_id, v_d_tax;
	select w_tax into v_w_tax from warehouse where w_id = p_w;
	select c_discount, c_last, c_credit into v_discount, v_last, v_credit
		from customer where c_w_id = p_w and c_d_id = p_d and c_id = p_c;
	insert into orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
		values (v_o_id, p_d, p_w, p_c, current_timestamp, null, v_n, case when p_supply <@ array[p_w] then 1 else 0 end);
	insert into new_order (no_o_id, no_d_id, no_w_id) values (v_o_id, p_d, p_w);
	for i in 1..v_n loop
		select i_price, i_name, i_data into v_price, v_name, v_idata from item where i_id = p_items[i];
		if not found then
			raise exception 'item number is not valid' using errcode = '` + errcodeRollback + `';
		end if;
		update stock set
			s_quantity = case when s_quantity - p_qty[i] >= 10 then s_quantity - p_qty[i] else s_quantity - p_qty[i] + 91 end,
			s_ytd = s_ytd + p_qty[i], s_order_cnt = s_order_cnt + 1,
			s_remote_cnt = s_remote_cnt + case when p_supply[i] <> p_w then 1 else 0 end
		where s_i_id = p_items[i] and s_w_id = p_supply[i]
		returning s_quantity, s_data, case p_d when 1 then s_dist_01 when 2 then s_dist_02 when 3 then s_dist_03
			when 4 then s_dist_04 when 5 then s_dist_05 when 6 then s_dist_06 when 7 then s_dist_07
			when 8 then s_dist_08 when 9 then s_dist_09 else s_dist_10 end
		into v_squant, v_sdata, v_dist;
		insert into order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info)
			values (v_o_id, p_d, p_w, i, p_items[i], p_supply[i], p_qty[i], p_qty[i] * v_price, v_dist);
		v_total := v_total + p_qty[i] * v_price;
	end loop;
	return v_o_id;
end $$`,
	// Payment, clause 2.5.2.2; p_c = 0 selects the customer by last name.
	// The text a BC customer's C_DATA gets is formatted before the UPDATE:
	// format() is only STABLE, and Citus refuses non-IMMUTABLE functions
	// inside CASE ("non-IMMUTABLE functions are not allowed in CASE or
	// COALESCE statements"); a variable is sent to the shard as a constant.
	`create or replace function pgarena_tpcc_payment(p_w int, p_d int, p_cw int, p_cd int, p_c int, p_last text, p_amount numeric)
returns int language plpgsql as $$
declare
	v_c int := p_c; v_ids int[]; v_wname text; v_dname text; v_credit text; v_cdata text;
begin
	update warehouse set w_ytd = w_ytd + p_amount where w_id = p_w returning w_name into v_wname;
	update district set d_ytd = d_ytd + p_amount where d_w_id = p_w and d_id = p_d returning d_name into v_dname;
	if p_c = 0 then
		select array_agg(c_id order by c_first) into v_ids
			from customer where c_w_id = p_cw and c_d_id = p_cd and c_last = p_last;
		if v_ids is null then
			raise exception 'no customer named % in warehouse % district %', p_last, p_cw, p_cd;
		end if;
		v_c := v_ids[(array_length(v_ids, 1) + 1) / 2];
	end if;
	v_cdata := format('%s %s %s %s %s %s ', v_c, p_cd, p_cw, p_d, p_w, p_amount);
	update customer set c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
		c_payment_cnt = c_payment_cnt + 1,
		c_data = case when c_credit = 'BC' then left(v_cdata || c_data, 500) else c_data end
	where c_w_id = p_cw and c_d_id = p_cd and c_id = v_c returning c_credit into v_credit;
	insert into history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data)
		values (p_cd, p_cw, v_c, p_d, p_w, current_timestamp, p_amount, v_wname || '    ' || v_dname);
	return v_c;
end $$`,
	// Order-Status, clause 2.6.2.2; p_c = 0 selects by last name.
	`create or replace function pgarena_tpcc_order_status(p_w int, p_d int, p_c int, p_last text)
returns int language plpgsql as $$
declare
	v_c int := p_c; v_ids int[]; v_balance numeric; v_first text; v_middle text;
	v_o int; v_entry timestamp; v_carrier int; r record;
begin
	if p_c = 0 then
		select array_agg(c_id order by c_first) into v_ids
			from customer where c_w_id = p_w and c_d_id = p_d and c_last = p_last;
		if v_ids is null then
			raise exception 'no customer named % in warehouse % district %', p_last, p_w, p_d;
		end if;
		v_c := v_ids[(array_length(v_ids, 1) + 1) / 2];
	end if;
	select c_balance, c_first, c_middle into v_balance, v_first, v_middle
		from customer where c_w_id = p_w and c_d_id = p_d and c_id = v_c;
	select o_id, o_entry_d, o_carrier_id into v_o, v_entry, v_carrier
		from orders where o_w_id = p_w and o_d_id = p_d and o_c_id = v_c order by o_id desc limit 1;
	for r in select ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
		from order_line where ol_w_id = p_w and ol_d_id = p_d and ol_o_id = v_o loop
	end loop;
	return v_o;
end $$`,
	// Delivery, clause 2.7.4.2: all 10 districts; returns how many had
	// an order to deliver.
	`create or replace function pgarena_tpcc_delivery(p_w int, p_carrier int)
returns int language plpgsql as $$
declare
	v_o int; v_c int; v_sum numeric; v_n int := 0;
begin
	for v_d in 1..10 loop
		delete from new_order where no_w_id = p_w and no_d_id = v_d
			and no_o_id = (select min(no_o_id) from new_order where no_w_id = p_w and no_d_id = v_d)
			returning no_o_id into v_o;
		continue when not found;
		update orders set o_carrier_id = p_carrier where o_w_id = p_w and o_d_id = v_d and o_id = v_o
			returning o_c_id into v_c;
		update order_line set ol_delivery_d = current_timestamp where ol_w_id = p_w and ol_d_id = v_d and ol_o_id = v_o;
		select coalesce(sum(ol_amount), 0) into v_sum from order_line where ol_w_id = p_w and ol_d_id = v_d and ol_o_id = v_o;
		update customer set c_balance = c_balance + v_sum, c_delivery_cnt = c_delivery_cnt + 1
			where c_w_id = p_w and c_d_id = v_d and c_id = v_c;
		v_n := v_n + 1;
	end loop;
	return v_n;
end $$`,
	// Stock-Level, clause 2.8.2.2.
	`create or replace function pgarena_tpcc_stock_level(p_w int, p_d int, p_threshold int)
returns bigint language plpgsql as $$
declare
	v_next int; v_count bigint;
begin
	select d_next_o_id into v_next from district where d_w_id = p_w and d_id = p_d;
	select count(distinct s_i_id) into v_count from order_line, stock
		where ol_w_id = p_w and ol_d_id = p_d and ol_o_id < v_next and ol_o_id >= v_next - 20
		and s_w_id = p_w and s_i_id = ol_i_id and s_quantity < p_threshold;
	return v_count;
end $$`,
}

// The calls. Parameters are cast so that every query mode resolves the
// same functions (the extended protocol sends Go ints as bigint).
const (
	callNewOrder    = `select pgarena_tpcc_new_order($1::int, $2::int, $3::int, $4::int[], $5::int[], $6::int[])`
	callPayment     = `select pgarena_tpcc_payment($1::int, $2::int, $3::int, $4::int, $5::int, $6::text, $7::bigint * 0.01)`
	callOrderStatus = `select pgarena_tpcc_order_status($1::int, $2::int, $3::int, $4::text)`
	callDelivery    = `select pgarena_tpcc_delivery($1::int, $2::int)`
	callStockLevel  = `select pgarena_tpcc_stock_level($1::int, $2::int, $3::int)`
)

// newOrderProc runs a new-order as one function call. Lines go in
// (supplying warehouse, item) order, which numbers them, so that
// concurrent new-orders lock stock rows in one order; the unused item of
// the 1% rule stays last. The raised rollback is counted and returns nil
// (see newOrder).
func (wk *worker) newOrderProc(ctx context.Context, conn *pgx.Conn, in newOrderInput) error {
	lines := in.lines
	body := lines
	if in.rollback {
		body = lines[:len(lines)-1]
	}
	sort.Slice(body, func(a, b int) bool {
		return body[a].supply < body[b].supply || body[a].supply == body[b].supply && body[a].item < body[b].item
	})
	n := len(lines)
	items, supply, qty := make([]int32, n), make([]int32, n), make([]int32, n)
	for i, l := range lines {
		items[i], supply[i], qty[i] = l.item, l.supply, l.qty
	}
	var oid int32
	err := conn.QueryRow(ctx, callNewOrder, in.w, in.d, in.c, items, supply, qty).Scan(&oid)
	var pgErr *pgconn.PgError
	if in.rollback && errors.As(err, &pgErr) && pgErr.Code == errcodeRollback {
		wk.w.rollbacks.Add(1)
		return nil
	}
	return err
}

func (wk *worker) paymentProc(ctx context.Context, conn *pgx.Conn, in paymentInput) error {
	var cid int32
	return conn.QueryRow(ctx, callPayment, in.w, in.d, in.cw, in.cd, in.c, in.last, in.amount).Scan(&cid)
}

// orderStatusProc: the function returns null for a customer without
// orders, which is no failure (see orderStatusOf).
func (wk *worker) orderStatusProc(ctx context.Context, conn *pgx.Conn, w, d, c int, last string) error {
	var oid *int32
	return conn.QueryRow(ctx, callOrderStatus, w, d, c, last).Scan(&oid)
}

func (wk *worker) deliveryProc(ctx context.Context, conn *pgx.Conn, w, carrier int) error {
	var delivered int32
	return conn.QueryRow(ctx, callDelivery, w, carrier).Scan(&delivered)
}

func (wk *worker) stockLevelProc(ctx context.Context, conn *pgx.Conn, w, d, threshold int) error {
	var lowStock int64
	return conn.QueryRow(ctx, callStockLevel, w, d, threshold).Scan(&lowStock)
}
