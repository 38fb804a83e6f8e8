package tpcc

import (
	"fmt"

	"github.com/pgarena/pgarena/internal/workload"
)

// cLastComment starts the comment init puts on customer.c_last: the NURand
// constant C the load drew C_LAST with, which a run needs for the rule of
// clause 2.1.6.1.
const cLastComment = "pgarena: NURand C of C_LAST at load = "

// Tables implements workload.Workload: the nine tables of clause 1.3 with
// HammerDB's PostgreSQL column names and types, in the order of clause 1.3.
// Keys and indexes (HammerDB's names) are built after the load. Every
// column is NOT NULL as in HammerDB's DDL but o_carrier_id, ol_delivery_d,
// ol_amount, ol_dist_info and h_c_id.
//
// Three differences from HammerDB are deliberate:
//   - The counters c_payment_cnt, c_delivery_cnt, s_order_cnt and
//     s_remote_cnt are integer, not smallint: a hot customer or item of the
//     NURand skew passes 32767 in a long run at a high rate, and smallint
//     would then fail every transaction touching it ("smallint out of
//     range"). Clause 1.3.1 asks for 4 digits at least, which both hold.
//   - stock's key is (s_w_id, s_i_id), not (s_i_id, s_w_id): new-order
//     updates its stock rows in (supplying warehouse, item) order, which
//     this key follows, a warehouse's stock is one range of the index (as
//     the load, a --warehouse-range slice and stock-level read it), and
//     Citus's distribution column leads. Lookups by both columns, all
//     that the transactions make, use either key alike.
//   - Columns are in the order of clause 1.3, not HammerDB's (which puts
//     fixed-width columns first); names and types match, so only
//     positional access (SELECT *, COPY without a column list) tells.
func (w *Workload) Tables() []workload.Table {
	g := &generator{seed: w.seed, first: 1, last: w.warehouses, c: constantsFor(w.seed)}
	if w.sliceFirst > 0 {
		g.first, g.last = w.sliceFirst, w.sliceLast
	}
	tables := []workload.Table{
		{
			Name: "warehouse",
			Create: []string{`create table warehouse (w_id integer not null, w_ytd numeric(16,2) not null, w_tax numeric(4,4) not null,
				w_name varchar(10) not null, w_street_1 varchar(20) not null, w_street_2 varchar(20) not null, w_city varchar(20) not null,
				w_state char(2) not null, w_zip char(9) not null)`},
			Columns: []string{"w_id", "w_ytd", "w_tax", "w_name", "w_street_1", "w_street_2", "w_city", "w_state", "w_zip"},
			Rows:    g.warehouseRows(),
			// the functions of --stored-procs and HammerDB's are created with the keys
			PostLoad: append(append([]string{"alter table warehouse add constraint warehouse_i1 primary key (w_id)"},
				procDDL...), hammerdbDDL.Get()...),
		},
		{
			Name: "district",
			Create: []string{`create table district (d_id smallint not null, d_w_id integer not null, d_ytd numeric(12,2) not null,
				d_tax numeric(4,4) not null, d_next_o_id integer not null, d_name varchar(10) not null, d_street_1 varchar(20) not null,
				d_street_2 varchar(20) not null, d_city varchar(20) not null, d_state char(2) not null, d_zip char(9) not null)`},
			Columns:  []string{"d_id", "d_w_id", "d_ytd", "d_tax", "d_next_o_id", "d_name", "d_street_1", "d_street_2", "d_city", "d_state", "d_zip"},
			Rows:     g.districtRows(),
			PostLoad: []string{"alter table district add constraint district_i1 primary key (d_w_id, d_id)"},
		},
		{
			Name: "customer",
			Create: []string{`create table customer (c_id integer not null, c_d_id smallint not null, c_w_id integer not null,
				c_first varchar(16) not null, c_middle char(2) not null, c_last varchar(16) not null, c_street_1 varchar(20) not null,
				c_street_2 varchar(20) not null, c_city varchar(20) not null, c_state char(2) not null, c_zip char(9) not null, c_phone char(16) not null,
				c_since timestamptz not null, c_credit char(2) not null, c_credit_lim numeric(12,2) not null, c_discount numeric(4,4) not null,
				c_balance numeric(12,2) not null, c_ytd_payment numeric(12,2) not null, c_payment_cnt integer not null,
				c_delivery_cnt integer not null, c_data varchar(500) not null)`},
			Columns: []string{"c_id", "c_d_id", "c_w_id", "c_first", "c_middle", "c_last", "c_street_1", "c_street_2",
				"c_city", "c_state", "c_zip", "c_phone", "c_since", "c_credit", "c_credit_lim", "c_discount",
				"c_balance", "c_ytd_payment", "c_payment_cnt", "c_delivery_cnt", "c_data"},
			Rows: g.customerRows(),
			PostLoad: []string{
				"alter table customer add constraint customer_i1 primary key (c_w_id, c_d_id, c_id)",
				"create unique index customer_i2 on customer (c_w_id, c_d_id, c_last, c_first, c_id)",
				fmt.Sprintf("comment on column customer.c_last is '%s%d'", cLastComment, g.c.cLastLoad),
			},
		},
		{
			Name: "history",
			Create: []string{`create table history (h_c_id integer, h_c_d_id smallint not null, h_c_w_id integer not null, h_d_id smallint not null,
				h_w_id integer not null, h_date timestamptz not null, h_amount numeric(6,2) not null, h_data varchar(24) not null)`},
			Columns: []string{"h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data"},
			Rows:    g.historyRows(),
		},
		{
			Name:     "new_order",
			Create:   []string{`create table new_order (no_w_id integer not null, no_d_id smallint not null, no_o_id integer not null)`},
			Columns:  []string{"no_w_id", "no_d_id", "no_o_id"},
			Rows:     g.newOrderRows(),
			PostLoad: []string{"alter table new_order add constraint new_order_i1 primary key (no_w_id, no_d_id, no_o_id)"},
		},
		{
			Name: "orders",
			Create: []string{`create table orders (o_id integer not null, o_w_id integer not null, o_d_id smallint not null,
				o_c_id integer not null, o_carrier_id smallint, o_ol_cnt smallint not null, o_all_local smallint not null, o_entry_d timestamptz not null)`},
			Columns: []string{"o_id", "o_w_id", "o_d_id", "o_c_id", "o_carrier_id", "o_ol_cnt", "o_all_local", "o_entry_d"},
			Rows:    g.orderRows(),
			PostLoad: []string{
				"alter table orders add constraint orders_i1 primary key (o_w_id, o_d_id, o_id)",
				"create unique index orders_i2 on orders (o_w_id, o_d_id, o_c_id, o_id)",
			},
		},
		{
			Name: "order_line",
			Create: []string{`create table order_line (ol_w_id integer not null, ol_d_id smallint not null,
				ol_o_id integer not null, ol_number smallint not null, ol_i_id integer not null, ol_delivery_d timestamptz,
				ol_amount numeric(6,2), ol_supply_w_id integer not null, ol_quantity smallint not null, ol_dist_info char(24))`},
			Columns: []string{"ol_w_id", "ol_d_id", "ol_o_id", "ol_number", "ol_i_id", "ol_delivery_d", "ol_amount",
				"ol_supply_w_id", "ol_quantity", "ol_dist_info"},
			Rows:     g.orderLineRows(),
			PostLoad: []string{"alter table order_line add constraint order_line_i1 primary key (ol_w_id, ol_d_id, ol_o_id, ol_number)"},
		},
		{
			Name: "item",
			Create: []string{`create table item (i_id integer not null, i_im_id integer not null, i_name varchar(24) not null,
				i_price numeric(5,2) not null, i_data varchar(50) not null)`},
			Columns:  []string{"i_id", "i_im_id", "i_name", "i_price", "i_data"},
			Rows:     g.itemRows(),
			PostLoad: []string{"alter table item add constraint item_i1 primary key (i_id)"},
		},
		{
			Name: "stock",
			Create: []string{`create table stock (s_i_id integer not null, s_w_id integer not null, s_quantity smallint not null,
				s_dist_01 char(24) not null, s_dist_02 char(24) not null, s_dist_03 char(24) not null, s_dist_04 char(24) not null, s_dist_05 char(24) not null,
				s_dist_06 char(24) not null, s_dist_07 char(24) not null, s_dist_08 char(24) not null, s_dist_09 char(24) not null, s_dist_10 char(24) not null,
				s_ytd integer not null, s_order_cnt integer not null, s_remote_cnt integer not null, s_data varchar(50) not null)`},
			Columns: []string{"s_i_id", "s_w_id", "s_quantity", "s_dist_01", "s_dist_02", "s_dist_03", "s_dist_04",
				"s_dist_05", "s_dist_06", "s_dist_07", "s_dist_08", "s_dist_09", "s_dist_10", "s_ytd", "s_order_cnt",
				"s_remote_cnt", "s_data"},
			Rows:     g.stockRows(),
			PostLoad: []string{"alter table stock add constraint stock_i1 primary key (s_w_id, s_i_id)"},
		},
	}
	if w.citus {
		tables[0].PostLoad = append(tables[0].PostLoad, citusFunctionDDL()...)
	}
	if w.fillfactor < 100 {
		for i := range tables {
			tables[i].Create[0] += fmt.Sprintf(" with (fillfactor = %d)", w.fillfactor)
		}
	}
	return tables
}
