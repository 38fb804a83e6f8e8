package chbench

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pgarena/pgarena/internal/workload"
)

// Cardinalities of the CH-benCHmark's extra tables (fixed, whatever the
// warehouses: the paper's supplier, nation and region).
const (
	suppliers = 10000 // su_suppkey 0..9999, the range of mod(s_w_id * s_i_id, 10000)
	nations   = 62
	regions   = 5
	// supplierBatch rows per supplier batch.
	supplierBatch = 1000
)

// regionNames are TPC-H's five regions, r_regionkey 0..4.
var regionNames = []string{"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"}

// nationList are the 62 nations in key order: n_nationkey is the ASCII
// code of '0'..'9', 'A'..'Z', 'a'..'z' (nationKeys). Customers' nations
// come from the first letter of c_state, which tpcc draws from 'A'..'Z':
// GERMANY ('G') and CAMBODIA ('C'), which the queries name, are there.
var nationList = []struct {
	name   string
	region int
}{
	// '0'..'9'
	{"AUSTRALIA", 2}, {"CANADA", 1}, {"CHILE", 1}, {"CHINA", 2}, {"ETHIOPIA", 0},
	{"INDONESIA", 2}, {"IRAN", 4}, {"IRAQ", 4}, {"JORDAN", 4}, {"MOZAMBIQUE", 0},
	// 'A'..'Z'
	{"ARGENTINA", 1}, {"BRAZIL", 1}, {"CAMBODIA", 2}, {"DENMARK", 3}, {"EGYPT", 4},
	{"FRANCE", 3}, {"GERMANY", 3}, {"HUNGARY", 3}, {"INDIA", 2}, {"JAPAN", 2},
	{"KENYA", 0}, {"LEBANON", 4}, {"MOROCCO", 0}, {"NIGERIA", 0}, {"OMAN", 4},
	{"PERU", 1}, {"QATAR", 4}, {"ROMANIA", 3}, {"SPAIN", 3}, {"THAILAND", 2},
	{"UNITED KINGDOM", 3}, {"VIETNAM", 2}, {"WALES", 3}, {"MEXICO", 1}, {"YEMEN", 4},
	{"ZAMBIA", 0},
	// 'a'..'z'
	{"ALBANIA", 3}, {"BELGIUM", 3}, {"BOLIVIA", 1}, {"COLOMBIA", 1}, {"CROATIA", 3},
	{"CUBA", 1}, {"ECUADOR", 1}, {"ESTONIA", 3}, {"FIJI", 2}, {"FINLAND", 3},
	{"GHANA", 0}, {"GREECE", 3}, {"ICELAND", 3}, {"IRELAND", 3}, {"ITALY", 3},
	{"KOREA", 2}, {"LATVIA", 3}, {"MALAYSIA", 2}, {"NEPAL", 2}, {"NORWAY", 3},
	{"PAKISTAN", 2}, {"POLAND", 3}, {"PORTUGAL", 3}, {"RUSSIA", 3}, {"SWEDEN", 3},
	{"TUNISIA", 0},
}

// nationKeys are the ASCII codes of '0'-'9', 'A'-'Z', 'a'-'z', in order.
func nationKeys() []int32 {
	keys := make([]int32, 0, nations)
	for _, r := range [][2]byte{{'0', '9'}, {'A', 'Z'}, {'a', 'z'}} {
		for c := r[0]; c <= r[1]; c++ {
			keys = append(keys, int32(c))
		}
	}
	return keys
}

// Stream ids of the extra tables' generators (with the seed).
const (
	streamRegion uint64 = 0xc4_0001 + iota
	streamNation
	streamSupplier
)

// extraTables are supplier, nation and region, with the paper's columns
// (TPC-H's, prefixed su_ for supplier). Their rows are a pure function of
// (seed, table, batch).
func extraTables(seed uint64) []workload.Table {
	return []workload.Table{
		{
			Name: "supplier",
			Create: []string{`create table supplier (su_suppkey integer not null, su_name char(25), su_address varchar(40),
				su_nationkey integer, su_phone char(15), su_acctbal numeric(12,2), su_comment char(101))`},
			Columns:  []string{"su_suppkey", "su_name", "su_address", "su_nationkey", "su_phone", "su_acctbal", "su_comment"},
			Rows:     workload.Batches{N: suppliers / supplierBatch, Rows: suppliers, Fill: supplierRows(seed)},
			PostLoad: []string{"alter table supplier add constraint supplier_pk primary key (su_suppkey)"},
		},
		{
			Name: "nation",
			Create: []string{`create table nation (n_nationkey integer not null, n_name char(25), n_regionkey integer,
				n_comment char(152))`},
			Columns:  []string{"n_nationkey", "n_name", "n_regionkey", "n_comment"},
			Rows:     workload.Batches{N: 1, Rows: nations, Fill: nationRows(seed)},
			PostLoad: []string{"alter table nation add constraint nation_pk primary key (n_nationkey)"},
		},
		{
			Name:     "region",
			Create:   []string{`create table region (r_regionkey integer not null, r_name char(55), r_comment char(152))`},
			Columns:  []string{"r_regionkey", "r_name", "r_comment"},
			Rows:     workload.Batches{N: 1, Rows: regions, Fill: regionRows(seed)},
			PostLoad: []string{"alter table region add constraint region_pk primary key (r_regionkey)"},
		},
	}
}

const letters = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ"

// text is a random string of lo..hi letters and spaces.
func text(rng *rand.Rand, lo, hi int) string {
	b := make([]byte, lo+rng.IntN(hi-lo+1))
	for i := range b {
		b[i] = letters[rng.IntN(len(letters))]
	}
	return string(b)
}

// rows returns dst[:0] grown to n rows of width columns, reusing its rows.
func rows(dst [][]any, n, width int) [][]any {
	dst = dst[:0]
	for len(dst) < n {
		if len(dst) < cap(dst) {
			dst = dst[:len(dst)+1]
			if last := &dst[len(dst)-1]; len(*last) != width {
				*last = make([]any, width)
			}
			continue
		}
		dst = append(dst, make([]any, width))
	}
	return dst
}

func regionRows(seed uint64) func(int, [][]any) [][]any {
	return func(_ int, dst [][]any) [][]any {
		rng := rand.New(rand.NewPCG(seed, streamRegion))
		dst = rows(dst, regions, 3)
		for i, r := range dst {
			r[0], r[1], r[2] = int32(i), regionNames[i], text(rng, 31, 115)
		}
		return dst
	}
}

func nationRows(seed uint64) func(int, [][]any) [][]any {
	return func(_ int, dst [][]any) [][]any {
		rng := rand.New(rand.NewPCG(seed, streamNation))
		keys := nationKeys()
		dst = rows(dst, nations, 4)
		for i, r := range dst {
			r[0], r[1], r[2], r[3] = keys[i], nationList[i].name, int32(nationList[i].region), text(rng, 31, 114)
		}
		return dst
	}
}

// supplierRows fills batch i: su_suppkey i*1000 .. i*1000+999. A supplier's
// nation is any of the 62; su_phone has TPC-H's shape (country code
// 10..34); su_acctbal is -999.99..9999.99; about 1 comment in 200 holds
// "bad" (query 16 leaves those suppliers out).
func supplierRows(seed uint64) func(int, [][]any) [][]any {
	keys := nationKeys()
	return func(batch int, dst [][]any) [][]any {
		rng := rand.New(rand.NewPCG(seed, streamSupplier<<20|uint64(batch)))
		dst = rows(dst, supplierBatch, 7)
		for j, r := range dst {
			k := batch*supplierBatch + j
			comment := text(rng, 25, 100)
			if rng.IntN(200) == 0 {
				at := rng.IntN(len(comment) - 3)
				comment = comment[:at] + "bad" + comment[at+3:]
			}
			r[0] = int32(k)
			r[1] = fmt.Sprintf("Supplier#%09d", k)
			r[2] = strings.TrimSpace(text(rng, 10, 40))
			r[3] = keys[rng.IntN(nations)]
			r[4] = fmt.Sprintf("%02d-%03d-%03d-%04d", 10+rng.IntN(25), 100+rng.IntN(900), 100+rng.IntN(900), 1000+rng.IntN(9000))
			r[5] = pgtype.Numeric{Int: big.NewInt(int64(rng.IntN(1099999)) - 99999), Exp: -2, Valid: true}
			r[6] = comment
		}
		return dst
	}
}
