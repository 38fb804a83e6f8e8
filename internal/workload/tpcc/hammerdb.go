package tpcc

import (
	"strconv"
	"strings"

	"github.com/pgarena/pgarena/internal/lazy"
)

// HammerDB's interface on PostgreSQL: the routines its TPROC-C driver
// calls, with its names and signatures, so that HammerDB's driver runs
// unchanged on a database pgarena loaded. Written here from the TPC-C
// specification (clauses 2.4-2.8) and the calls HammerDB's driver makes;
// init creates both of HammerDB's modes side by side (its driver picks by
// pg_storedprocs when both are there):
//
//   - functions (HammerDB's default), called with SELECT:
//     neword(w, max_w, d, c, ol_cnt, 0) returns the order's total;
//     payment(w, d, c_w, c_d, c, byname, amount, c_last, c_credit, c_balance)
//     returns the customer id; ostat(w, d, c, byname, c_last) returns the
//     order's lines as SETOF record; delivery(w, carrier) returns the
//     districts delivered; slev(w, d, threshold) returns the count.
//   - procedures (pg_storedprocs), called with CALL, each with HammerDB's
//     INOUT parameters and the SUT's timestamp (timestamp without time zone)
//     as the last input.
//
// HammerDB's interface passes only the number of order lines to neword: the
// items, supplying warehouses and quantities are drawn in the database
// (clause 2.4.1.5: OL_I_ID by NURand(8191, 1, 100000), 1% remote supply
// when there are several warehouses, quantity 1..10), and so is the 1%
// unused item (clause 2.4.1.4). That order is rolled back (clause 2.4.2.3)
// by a subtransaction: neword returns normally, with a null total, and
// leaves no trace, so sum(d_next_o_id) counts only committed orders.
//
// By name with no customer of that name (HammerDB's function-mode driver
// quotes its placeholder and sends the literal '$8' as C_LAST), payment
// and ostat take the customer by number, as HammerDB's own functions do.
//
// dbms_random(lo, hi) is HammerDB's helper: a uniform integer in lo..hi.
//
// `init tpcc --functions-only` creates these and pgarena's own functions
// (procs.go) on a database already loaded, by pgarena or by HammerDB,
// without touching its tables; drop removes only those pgarena marked.

// FunctionsOnly implements workload.Functioner: --functions-only.
func (w *Workload) FunctionsOnly() bool { return w.functionsOnly }

// hammerdbNURandC is C of NURand(8191, 1, 100000) for OL_I_ID in neword
// (clause 2.1.6: any constant in 0..8191; the load does not depend on it).
const hammerdbNURandC = 4177

// hammerdbSignatures are HammerDB's routines, as to_regprocedure reads
// them.
var hammerdbSignatures = []string{
	"dbms_random(int,int)",
	"neword(int,int,int,int,int,int)",
	"payment(int,int,int,int,int,int,numeric,varchar,varchar,numeric)",
	"ostat(int,int,int,int,varchar)",
	"delivery(int,int)",
	"slev(int,int,int)",
	"neword(int,int,int,int,int,numeric,varchar,varchar,numeric,numeric,int,timestamp)",
	"payment(int,int,int,int,int,numeric,bpchar,varchar,int," +
		"varchar,varchar,varchar,bpchar,bpchar,varchar,varchar,varchar,bpchar,bpchar," +
		"varchar,bpchar,varchar,varchar,varchar,bpchar,bpchar,bpchar,timestamp,numeric,numeric,numeric,varchar,timestamp)",
	"ostat(int,int,int,int,varchar,varchar,varchar,numeric,int,timestamp,int,text)",
	"delivery(int,int,timestamp)",
	"slev(int,int,int,int)",
}

// hammerdbDDL creates the routines of hammerdbSignatures, in that order
// (built on first use: pasting the bodies costs ~70 k instructions that a
// command other than tpcc's init and check would pay at start).
var hammerdbDDL = lazy.Value[[]string]{New: buildHammerdbDDL}

func buildHammerdbDDL() []string {
	newOrderBody := strings.NewReplacer("ERRCODE", errcodeRollback, "NURAND_C", strconv.Itoa(hammerdbNURandC)).Replace(newOrderBody)
	return []string{
		`create or replace function dbms_random(int, int) returns int language sql volatile strict as
$$ select floor(random() * ($2 - $1 + 1))::int + $1 $$`,

		`create or replace function neword(no_w_id int, no_max_w_id int, no_d_id int, no_c_id int, no_o_ol_cnt int, no_d_next_o_id int)
returns numeric language plpgsql as $$
declare
	no_c_discount numeric; no_c_last varchar; no_c_credit varchar; no_d_tax numeric; no_w_tax numeric;
	tstamp timestamptz := current_timestamp;
` + newOrderBody + `
	return v_total;
end $$`,

		`create or replace function payment(p_w_id int, p_d_id int, p_c_w_id int, p_c_d_id int, p_c_id int, byname int,
	p_h_amount numeric, p_c_last varchar, p_c_credit varchar, p_c_balance numeric)
returns int language plpgsql as $$
declare
	p_c_data varchar; tstamp timestamptz := current_timestamp;
` + paymentBody + `
	return p_c_id;
end $$`,

		// Order-Status, clause 2.6.2.2: the customer's last order, one row per
		// line with the customer's and the order's columns beside (the shape
		// HammerDB's driver declares in its column definition list).
		`create or replace function ostat(os_w_id int, os_d_id int, os_c_id int, byname int, os_c_last varchar)
returns setof record language plpgsql as $$
declare
	os_c_first varchar; os_c_middle varchar; os_c_balance numeric; os_o_id int; os_entdate timestamp;
	os_o_carrier_id int; os_c_line text;
` + orderStatusBody + `
	return query select ol_i_id::int, ol_supply_w_id::int, ol_quantity::smallint, ol_amount::numeric,
		ol_delivery_d::timestamptz, os_c_id, os_c_last, os_c_first, os_c_middle, os_c_balance, os_o_id,
		os_entdate, os_o_carrier_id
		from order_line where ol_w_id = os_w_id and ol_d_id = os_d_id and ol_o_id = os_o_id;
end $$`,

		`create or replace function delivery(d_w_id int, d_o_carrier_id int)
returns int language plpgsql as $$
declare
	tstamp timestamptz := current_timestamp;
` + deliveryBody + `
	return v_delivered;
end $$`,

		`create or replace function slev(st_w_id int, st_d_id int, threshold int)
returns int language plpgsql as $$
declare
	stock_count int;
` + stockLevelBody + `
	return stock_count;
end $$`,

		`create or replace procedure neword(no_w_id int, no_max_w_id int, no_d_id int, no_c_id int, no_o_ol_cnt int,
	inout no_c_discount numeric, inout no_c_last varchar, inout no_c_credit varchar, inout no_d_tax numeric,
	inout no_w_tax numeric, inout no_d_next_o_id int, tstamp timestamp)
language plpgsql as $$
declare
` + newOrderBody + `
end $$`,

		`create or replace procedure payment(p_w_id int, p_d_id int, p_c_w_id int, p_c_d_id int, byname int, p_h_amount numeric,
	inout p_c_credit char(2), inout p_c_last varchar(16), inout p_c_id int,
	inout p_w_street_1 varchar(20), inout p_w_street_2 varchar(20), inout p_w_city varchar(20), inout p_w_state char(2), inout p_w_zip char(9),
	inout p_d_street_1 varchar(20), inout p_d_street_2 varchar(20), inout p_d_city varchar(20), inout p_d_state char(2), inout p_d_zip char(9),
	inout p_c_first varchar(16), inout p_c_middle char(2), inout p_c_street_1 varchar(20), inout p_c_street_2 varchar(20),
	inout p_c_city varchar(20), inout p_c_state char(2), inout p_c_zip char(9), inout p_c_phone char(16),
	inout p_c_since timestamp, inout p_c_credit_lim numeric(12,2), inout p_c_discount numeric(4,4),
	inout p_c_balance numeric(12,2), inout p_c_data varchar(500), tstamp timestamp)
language plpgsql as $$
declare
` + paymentBody + `
	select w_street_1, w_street_2, w_city, w_state, w_zip into p_w_street_1, p_w_street_2, p_w_city, p_w_state, p_w_zip
		from warehouse where w_id = p_w_id;
	select d_street_1, d_street_2, d_city, d_state, d_zip into p_d_street_1, p_d_street_2, p_d_city, p_d_state, p_d_zip
		from district where d_w_id = p_w_id and d_id = p_d_id;
	select c_first, c_middle, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit_lim, c_discount
		into p_c_first, p_c_middle, p_c_street_1, p_c_street_2, p_c_city, p_c_state, p_c_zip, p_c_phone, p_c_since,
		p_c_credit_lim, p_c_discount
		from customer where c_w_id = p_c_w_id and c_d_id = p_c_d_id and c_id = p_c_id;
end $$`,

		`create or replace procedure ostat(os_w_id int, os_d_id int, inout os_c_id int, byname int, inout os_c_last varchar,
	inout os_c_first varchar, inout os_c_middle varchar, inout os_c_balance numeric, inout os_o_id int,
	inout os_entdate timestamp, inout os_o_carrier_id int, inout os_c_line text default '')
language plpgsql as $$
declare
` + orderStatusBody + `
	select string_agg(concat_ws(',', ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d), ';' order by ol_number)
		into os_c_line
		from order_line where ol_w_id = os_w_id and ol_d_id = os_d_id and ol_o_id = os_o_id;
end $$`,

		`create or replace procedure delivery(d_w_id int, d_o_carrier_id int, tstamp timestamp)
language plpgsql as $$
declare
` + deliveryBody + `
end $$`,

		`create or replace procedure slev(st_w_id int, st_d_id int, threshold int, inout stock_count int)
language plpgsql as $$
declare
` + stockLevelBody + `
end $$`,
	}
}

// newOrderBody is New-Order (clause 2.4.2.2) after the declarations of
// no_c_discount, no_c_last, no_c_credit, no_d_tax, no_w_tax and tstamp.
// Lines are processed in (supplying warehouse, item) order, the unused
// item last, so that concurrent new-orders lock stock rows in one order.
// ERRCODE and NURAND_C are replaced by hammerdbDDL.
const newOrderBody = `
	v_item int[]; v_supply int[]; v_qty int[]; v_all_local int := 1; v_rollback boolean;
	v_n int := 0; v_price numeric; v_dist char(24); v_sum numeric := 0; v_total numeric; r record;
begin
	-- clause 2.4.1.5: the input of the order lines
	v_rollback := floor(random() * 100) = 0;
	for i in 1..no_o_ol_cnt loop
		v_item[i] := ((floor(random() * 8192)::int | (floor(random() * 100000)::int + 1)) + NURAND_C) % 100000 + 1;
		v_supply[i] := no_w_id;
		if no_max_w_id > 1 and floor(random() * 100) = 0 then
			v_supply[i] := (no_w_id + floor(random() * (no_max_w_id - 1))::int) % no_max_w_id + 1;
			v_all_local := 0;
		end if;
		v_qty[i] := floor(random() * 10)::int + 1;
	end loop;
	if v_rollback then
		v_item[no_o_ol_cnt] := 100001; -- clause 2.4.1.5.1: an unused item
	end if;
	begin
		update district set d_next_o_id = d_next_o_id + 1 where d_w_id = no_w_id and d_id = no_d_id
			returning d_next_o_id - 1, d_tax into no_d_next_o_id, no_d_tax;
		select w_tax into no_w_tax from warehouse where w_id = no_w_id;
		select c_discount, c_last, c_credit into no_c_discount, no_c_last, no_c_credit
			from customer where c_w_id = no_w_id and c_d_id = no_d_id and c_id = no_c_id;
		insert into orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
			values (no_d_next_o_id, no_d_id, no_w_id, no_c_id, tstamp, null, no_o_ol_cnt, v_all_local);
		insert into new_order (no_o_id, no_d_id, no_w_id) values (no_d_next_o_id, no_d_id, no_w_id);
		for r in select u.s, u.i, u.q from unnest(v_supply, v_item, v_qty) u(s, i, q) order by u.i > 100000, u.s, u.i loop
			v_n := v_n + 1;
			select i_price into v_price from item where i_id = r.i;
			if not found then
				raise exception 'Item number is not valid' using errcode = 'ERRCODE';
			end if;
			update stock set
				s_quantity = case when s_quantity - r.q >= 10 then s_quantity - r.q else s_quantity - r.q + 91 end,
				s_ytd = s_ytd + r.q, s_order_cnt = s_order_cnt + 1,
				s_remote_cnt = s_remote_cnt + case when r.s <> no_w_id then 1 else 0 end
			where s_i_id = r.i and s_w_id = r.s
			returning case no_d_id when 1 then s_dist_01 when 2 then s_dist_02 when 3 then s_dist_03
				when 4 then s_dist_04 when 5 then s_dist_05 when 6 then s_dist_06 when 7 then s_dist_07
				when 8 then s_dist_08 when 9 then s_dist_09 else s_dist_10 end
			into v_dist;
			insert into order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info)
				values (no_d_next_o_id, no_d_id, no_w_id, v_n, r.i, r.s, r.q, r.q * v_price, v_dist);
			v_sum := v_sum + r.q * v_price;
		end loop;
		v_total := v_sum * (1 - no_c_discount) * (1 + no_w_tax + no_d_tax);
	exception when sqlstate 'ERRCODE' then
		v_total := null; -- clause 2.4.2.3: rolled back
	end;`

// paymentBody is Payment (clause 2.5.2.2) after the declarations of
// p_c_data and tstamp; it leaves the customer in p_c_id, p_c_last,
// p_c_credit, p_c_balance and p_c_data.
const paymentBody = `
	v_w_name varchar; v_d_name varchar; v_ids int[]; v_data varchar;
begin
	update warehouse set w_ytd = w_ytd + p_h_amount where w_id = p_w_id returning w_name into v_w_name;
	update district set d_ytd = d_ytd + p_h_amount where d_w_id = p_w_id and d_id = p_d_id returning d_name into v_d_name;
	if byname = 1 then
		-- clause 2.5.2.2: the customer at position ceil(n/2) sorted by C_FIRST
		select array_agg(c_id order by c_first) into v_ids
			from customer where c_w_id = p_c_w_id and c_d_id = p_c_d_id and c_last = p_c_last;
		if v_ids is not null then
			p_c_id := v_ids[(array_length(v_ids, 1) + 1) / 2];
		end if;
	end if;
	v_data := format('%s %s %s %s %s %s ', p_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_h_amount);
	update customer set c_balance = c_balance - p_h_amount, c_ytd_payment = c_ytd_payment + p_h_amount,
		c_payment_cnt = c_payment_cnt + 1,
		c_data = case when c_credit = 'BC' then left(v_data || c_data, 500) else c_data end
	where c_w_id = p_c_w_id and c_d_id = p_c_d_id and c_id = p_c_id
	returning c_last, c_credit, c_balance, c_data into p_c_last, p_c_credit, p_c_balance, p_c_data;
	insert into history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data)
		values (p_c_d_id, p_c_w_id, p_c_id, p_d_id, p_w_id, tstamp, p_h_amount, v_w_name || '    ' || v_d_name);`

// orderStatusBody is Order-Status (clause 2.6.2.2) up to the order lines,
// after the declarations of the os_ variables.
const orderStatusBody = `
	v_ids int[];
begin
	if byname = 1 then
		select array_agg(c_id order by c_first) into v_ids
			from customer where c_w_id = os_w_id and c_d_id = os_d_id and c_last = os_c_last;
		if v_ids is not null then
			os_c_id := v_ids[(array_length(v_ids, 1) + 1) / 2];
		end if;
	end if;
	select c_balance, c_first, c_middle, c_last into os_c_balance, os_c_first, os_c_middle, os_c_last
		from customer where c_w_id = os_w_id and c_d_id = os_d_id and c_id = os_c_id;
	select o_id, o_entry_d, o_carrier_id into os_o_id, os_entdate, os_o_carrier_id
		from orders where o_w_id = os_w_id and o_d_id = os_d_id and o_c_id = os_c_id order by o_id desc limit 1;`

// deliveryBody is Delivery (clause 2.7.4.2), all 10 districts, after the
// declaration of tstamp; v_delivered counts the districts that had an
// order to deliver.
const deliveryBody = `
	v_o int; v_c int; v_sum numeric; v_delivered int := 0;
begin
	for v_d in 1..10 loop
		delete from new_order where no_w_id = d_w_id and no_d_id = v_d
			and no_o_id = (select min(no_o_id) from new_order where no_w_id = d_w_id and no_d_id = v_d)
			returning no_o_id into v_o;
		continue when not found;
		update orders set o_carrier_id = d_o_carrier_id where o_w_id = d_w_id and o_d_id = v_d and o_id = v_o
			returning o_c_id into v_c;
		update order_line set ol_delivery_d = tstamp where ol_w_id = d_w_id and ol_d_id = v_d and ol_o_id = v_o;
		select coalesce(sum(ol_amount), 0) into v_sum from order_line where ol_w_id = d_w_id and ol_d_id = v_d and ol_o_id = v_o;
		update customer set c_balance = c_balance + v_sum, c_delivery_cnt = c_delivery_cnt + 1
			where c_w_id = d_w_id and c_d_id = v_d and c_id = v_c;
		v_delivered := v_delivered + 1;
	end loop;`

// stockLevelBody is Stock-Level (clause 2.8.2.2), into stock_count.
const stockLevelBody = `
	v_next int;
begin
	select d_next_o_id into v_next from district where d_w_id = st_w_id and d_id = st_d_id;
	select count(distinct s_i_id) into stock_count from order_line, stock
		where ol_w_id = st_w_id and ol_d_id = st_d_id and ol_o_id < v_next and ol_o_id >= v_next - 20
		and s_w_id = st_w_id and s_i_id = ol_i_id and s_quantity < threshold;`
