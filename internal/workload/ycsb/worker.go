package ycsb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/workload"
)

// statements are the SQL of YCSB's JDBC binding (DefaultDBFlavor) for one
// field count: read and scan fetch every column or one field, update
// writes every field or one.
type statements struct {
	readAll, scanAll, updateAll, insert string
	readField, scanField, updateField   []string
}

func newStatements(fields int) statements {
	var s statements
	s.readAll = "SELECT * FROM " + table + " WHERE YCSB_KEY = $1"
	s.scanAll = "SELECT * FROM " + table + " WHERE YCSB_KEY >= $1 ORDER BY YCSB_KEY LIMIT $2"
	var set, cols, vals strings.Builder
	for i := range fields {
		f := "FIELD" + strconv.Itoa(i)
		s.readField = append(s.readField, "SELECT "+f+" FROM "+table+" WHERE YCSB_KEY = $1")
		s.scanField = append(s.scanField, "SELECT "+f+" FROM "+table+" WHERE YCSB_KEY >= $1 ORDER BY YCSB_KEY LIMIT $2")
		s.updateField = append(s.updateField, "UPDATE "+table+" SET "+f+" = $1 WHERE YCSB_KEY = $2")
		if i > 0 {
			set.WriteString(", ")
		}
		fmt.Fprintf(&set, "%s = $%d", f, i+1)
		fmt.Fprintf(&cols, ", %s", f)
		fmt.Fprintf(&vals, ", $%d", i+2)
	}
	s.updateAll = "UPDATE " + table + " SET " + set.String() + " WHERE YCSB_KEY = $" + strconv.Itoa(fields+1)
	s.insert = "INSERT INTO " + table + " (YCSB_KEY" + cols.String() + ") VALUES ($1" + vals.String() + ")"
	return s
}

// maxRedraws bounds the redraws of a zipfian key not inserted yet; past
// it (never in practice: most of the space is readable) a uniform key of
// the readable space is taken.
const maxRedraws = 1000

// worker runs one client's operations.
type worker struct {
	m      mix
	ops    []op
	choose chooser
	rng    *rand.Rand
	keys   *keySpace
	hashed bool
	pad    int // zero padding of keys
	fields int
	// lengths draws the length of each value written; integrity makes
	// the values YCSB's deterministic ones and checks reads
	lengths   fieldLengths
	integrity bool
	stmts     statements

	base      int64   // rows when the run began
	space     int64   // the scrambled zipfian's key space
	scrambled zipfian // over scrambledItems
	latest    zipfian // over the readable keys, grown as they grow
	scanLen   zipfian // scan lengths minScan..maxScan, when zipfian
	exp       exponential

	keyBuf []byte
	valBuf []byte
	sizes  []int
	args   []any
}

func newWorker(w *Workload, keys *keySpace, base int64, latestZ float64, rng *rand.Rand) *worker {
	m := w.mix
	c := &worker{
		m: m, ops: w.ops, choose: newChooser(&m), rng: rng, keys: keys,
		hashed: w.insertOrder == orderHashed, pad: w.zeroPadding, fields: w.fieldCount,
		lengths:   newFieldLengths(w.lengthDist, w.minFieldLength, w.fieldLength),
		integrity: w.integrity,
		stmts:     newStatements(w.fieldCount), base: base,
	}
	switch m.dist {
	case distZipfian:
		// CoreWorkload: the space is the loaded records plus twice the
		// expected inserts of the run (operationcount * insertproportion
		// * 2), so that inserts do not move the popular keys. Without
		// --operation-count (a timed run) pgarena takes YCSB's usual
		// operationcount = recordcount.
		ops := base
		if w.operations > 0 {
			ops = int64(w.operations)
		}
		c.space = base + int64(float64(ops)*m.props[opInsert]*2)
		c.scrambled = newZipfian(scrambledItems, zipfianConstant, scrambledZetan)
	case distLatest:
		c.latest = newZipfian(base, zipfianConstant, latestZ)
	case distExponential:
		// CoreWorkload: ExponentialGenerator(percentile, recordcount * frac)
		c.exp = newExponential(m.expPercentile, float64(base)*m.expFrac)
	}
	if m.props[opScan] > 0 && m.scanDist == distZipfian {
		c.scanLen = newZipfian(int64(m.maxScan-m.minScan+1), zipfianConstant, 0)
	}
	return c
}

// Next implements workload.Worker: an operation in the mix's proportions.
func (c *worker) Next() workload.TxType { return workload.TxType(c.choose.next(c.rng)) }

// nextKey draws the key number of a read, update, scan or read-modify-write
// (CoreWorkload.nextKeynum): uniform and hotspot over the rows the run
// began with, zipfian over its space redrawing keys not inserted yet,
// latest counting back from the newest readable key. (YCSB's
// SkewedLatestGenerator draws last - zipfian(last), last being the newest
// acknowledged key number, so it never picks key 0; pgarena's latest
// ranges over every readable key.) Exponential counts back from the
// newest readable key too, redrawing past the oldest, as
// CoreWorkload.nextKeynum does; sequential takes the rows the run began
// with in turn.
func (c *worker) nextKey() int64 { return c.keys.keynum(c.nextIndex()) }

// nextIndex draws the index (keySpace.keynum) of nextKey's key.
func (c *worker) nextIndex() int64 {
	switch c.m.dist {
	case distUniform:
		return c.rng.Int64N(c.base)
	case distHotspot:
		return hotspot(c.rng, c.base, c.m.hotData, c.m.hotOpn)
	case distSequential:
		return (c.keys.sequential.Add(1) - 1) % c.base
	case distExponential:
		n := c.keys.count()
		for range maxRedraws {
			if back := c.exp.next(c.rng); back < n {
				return n - 1 - back
			}
		}
		return c.rng.Int64N(n)
	case distLatest:
		n := c.keys.count()
		c.latest.grow(n)
		return n - 1 - c.latest.next(c.rng)
	default:
		n := c.keys.count()
		for range maxRedraws {
			if k := scrambled(&c.scrambled, c.rng, c.space); k < n {
				return k
			}
		}
		return c.rng.Int64N(n)
	}
}

func (c *worker) key(keynum int64) string {
	c.keyBuf = keyName(c.keyBuf[:0], keynum, c.hashed, c.pad)
	return string(c.keyBuf)
}

// appendValues appends to args fresh values of the fields from..to-1 of
// key, their lengths drawn from the load's field length distribution
// (YCSB's buildValues and buildSingleValue), sharing one string.
func (c *worker) appendValues(args []any, key string, from, to int) []any {
	c.sizes = c.sizes[:0]
	sum := 0
	for range to - from {
		n := c.lengths.next(c.rng)
		c.sizes = append(c.sizes, n)
		sum += n
	}
	c.valBuf = c.valBuf[:0]
	if c.integrity {
		for i, n := range c.sizes {
			c.valBuf = appendIntegrityValue(c.valBuf, key, from+i, n)
		}
	} else {
		c.valBuf = fillValue(c.valBuf, sum, c.rng.Uint64)
	}
	all := string(c.valBuf)
	off := 0
	for _, n := range c.sizes {
		args = append(args, all[off:off+n])
		off += n
	}
	return args
}

// Do implements workload.Worker: one operation, each statement in its own
// implicit transaction (the JDBC binding's autocommit).
func (c *worker) Do(ctx context.Context, conn *pgx.Conn, tx workload.TxType) error {
	switch o := c.ops[tx]; o {
	case opRead:
		return c.read(ctx, conn, c.key(c.nextKey()))
	case opUpdate:
		return c.update(ctx, conn, c.key(c.nextKey()))
	case opInsert:
		return c.insert(ctx, conn)
	case opScan:
		return c.scan(ctx, conn)
	default:
		key := c.key(c.nextKey())
		if err := c.read(ctx, conn, key); err != nil {
			return fmt.Errorf("read_modify_write: %w", err)
		}
		if err := c.update(ctx, conn, key); err != nil {
			return fmt.Errorf("read_modify_write: %w", err)
		}
		return nil
	}
}

// read fetches one row; a missing row is an error (the JDBC binding's
// NOT_FOUND): every key drawn was inserted. With --data-integrity every
// field read must hold the value YCSB's dataintegrity gives it.
func (c *worker) read(ctx context.Context, conn *pgx.Conn, key string) error {
	sql := c.stmts.readAll
	field := -1 // all
	if !c.m.readAll {
		field = c.rng.IntN(c.fields)
		sql = c.stmts.readField[field]
	}
	rows, err := conn.Query(ctx, sql, key)
	var n int
	if err == nil && c.integrity {
		n, err = c.verify(rows, key, field)
	} else {
		n, err = drain(rows, err)
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", key, err)
	}
	if n != 1 {
		return fmt.Errorf("read %s: %d rows, want 1 (a key inserted before must exist)", key, n)
	}
	return nil
}

// update writes new values to one field, or all with --write-all-fields.
func (c *worker) update(ctx context.Context, conn *pgx.Conn, key string) error {
	var tag pgconn.CommandTag
	var err error
	if c.m.writeAll {
		c.args = append(c.appendValues(c.args[:0], key, 0, c.fields), key)
		tag, err = conn.Exec(ctx, c.stmts.updateAll, c.args...)
	} else {
		f := c.rng.IntN(c.fields)
		c.args = append(c.appendValues(c.args[:0], key, f, f+1), key)
		tag, err = conn.Exec(ctx, c.stmts.updateField[f], c.args...)
	}
	if err != nil {
		return fmt.Errorf("update %s: %w", key, err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("update %s: %d rows updated, want 1", key, tag.RowsAffected())
	}
	return nil
}

// insert adds the next key of the shared counter (keyspace.go): only a
// committed insert extends what reads may draw.
func (c *worker) insert(ctx context.Context, conn *pgx.Conn) error {
	x := c.keys.take()
	key := c.key(c.keys.keynum(x))
	c.args = c.appendValues(append(c.args[:0], key), key, 0, c.fields)
	_, err := conn.Exec(ctx, c.stmts.insert, c.args...)
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		c.keys.done(x)
		return nil
	case errors.As(err, &pgErr) && pgErr.Code == "23505":
		// the row is there: an earlier attempt committed (its answer was
		// lost), or an earlier run inserted it
		c.keys.done(x)
	default:
		c.keys.failed(x)
	}
	return fmt.Errorf("insert %s: %w", key, err)
}

// scan reads up to a scan length of rows from a start key in key order.
func (c *worker) scan(ctx context.Context, conn *pgx.Conn) error {
	key := c.key(c.nextKey())
	length := int64(c.m.minScan)
	if c.m.scanDist == distZipfian {
		length += c.scanLen.next(c.rng)
	} else {
		length += c.rng.Int64N(int64(c.m.maxScan - c.m.minScan + 1))
	}
	sql := c.stmts.scanAll
	if !c.m.readAll {
		sql = c.stmts.scanField[c.rng.IntN(c.fields)]
	}
	if _, err := drain(conn.Query(ctx, sql, key, length)); err != nil {
		return fmt.Errorf("scan %s limit %d: %w", key, length, err)
	}
	return nil
}

// drain reads every row of a result (as the binding reads each column)
// and returns how many there were.
func drain(rows pgx.Rows, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		_ = rows.RawValues()
		n++
	}
	return n, rows.Err()
}

// verify reads the rows of a read and checks each field against the
// value --data-integrity gives it (YCSB's verifyRow): the row is
// ycsb_key and every field (field -1) or the one field read. A NULL or
// different value is an error naming the field.
func (c *worker) verify(rows pgx.Rows, key string, field int) (int, error) {
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
		vals := rows.RawValues()
		cols, first := vals, 0
		if field < 0 {
			cols = vals[1:] // after ycsb_key
		} else {
			first = field
		}
		for i, v := range cols {
			f := first + i
			c.valBuf = appendIntegrityValue(c.valBuf[:0], key, f, c.lengths.max)
			if v == nil || !bytes.Equal(v, c.valBuf) {
				// the message copies: v belongs to the connection's buffer
				return n, &integrityError{key: key, field: f, got: bytes.Clone(v), want: string(c.valBuf)}
			}
		}
	}
	return n, rows.Err()
}

// integrityError is a read whose value is not the one --data-integrity
// loaded or wrote.
type integrityError struct {
	key   string
	field int
	got   []byte // nil: NULL
	want  string
}

func (e *integrityError) Error() string {
	got := "NULL"
	if e.got != nil {
		got = strconv.Quote(clip(string(e.got)))
	}
	return fmt.Sprintf("data integrity: field%d of %s is %s, want %s (the value --data-integrity derives from key and field)",
		e.field, e.key, got, strconv.Quote(clip(e.want)))
}

// clip shortens s to 40 bytes for a message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
