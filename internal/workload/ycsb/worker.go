package ycsb

import (
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
	fields int
	length int
	stmts  statements

	base      int64   // rows when the run began
	space     int64   // the scrambled zipfian's key space
	scrambled zipfian // over scrambledItems
	latest    zipfian // over the readable keys, grown as they grow
	scanLen   zipfian // scan lengths 1..maxScan, when zipfian

	keyBuf []byte
	valBuf []byte
	args   []any
}

func newWorker(w *Workload, keys *keySpace, base int64, latestZ float64, rng *rand.Rand) *worker {
	m := w.mix
	c := &worker{
		m: m, ops: w.ops, choose: newChooser(&m), rng: rng, keys: keys,
		hashed: w.insertOrder == orderHashed, fields: w.fieldCount, length: w.fieldLength,
		stmts: newStatements(w.fieldCount), base: base,
	}
	switch m.dist {
	case distZipfian:
		// CoreWorkload: the space is the loaded records plus twice the
		// expected inserts of the run (operationcount * insertproportion
		// * 2), so that inserts do not move the popular keys. A timed
		// run has no operation count: pgarena takes YCSB's usual
		// operationcount = recordcount.
		c.space = base + int64(float64(base)*m.props[opInsert]*2)
		c.scrambled = newZipfian(scrambledItems, zipfianConstant, scrambledZetan)
	case distLatest:
		c.latest = newZipfian(base, zipfianConstant, latestZ)
	}
	if m.props[opScan] > 0 && m.scanDist == distZipfian {
		c.scanLen = newZipfian(int64(m.maxScan), zipfianConstant, 0)
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
// ranges over every readable key.)
func (c *worker) nextKey() int64 { return c.keys.keynum(c.nextIndex()) }

// nextIndex draws the index (keySpace.keynum) of nextKey's key.
func (c *worker) nextIndex() int64 {
	switch c.m.dist {
	case distUniform:
		return c.rng.Int64N(c.base)
	case distHotspot:
		return hotspot(c.rng, c.base, c.m.hotData, c.m.hotOpn)
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
	c.keyBuf = keyName(c.keyBuf[:0], keynum, c.hashed)
	return string(c.keyBuf)
}

// value returns n fresh field values of the load's length, sharing one
// string.
func (c *worker) values(n int) string {
	c.valBuf = fillValue(c.valBuf[:0], n*c.length, c.rng.Uint64)
	return string(c.valBuf)
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
// NOT_FOUND): every key drawn was inserted.
func (c *worker) read(ctx context.Context, conn *pgx.Conn, key string) error {
	sql := c.stmts.readAll
	if !c.m.readAll {
		sql = c.stmts.readField[c.rng.IntN(c.fields)]
	}
	n, err := drain(conn.Query(ctx, sql, key))
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
		all := c.values(c.fields)
		c.args = c.args[:0]
		for f := range c.fields {
			c.args = append(c.args, all[f*c.length:(f+1)*c.length])
		}
		c.args = append(c.args, key)
		tag, err = conn.Exec(ctx, c.stmts.updateAll, c.args...)
	} else {
		tag, err = conn.Exec(ctx, c.stmts.updateField[c.rng.IntN(c.fields)], c.values(1), key)
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
	all := c.values(c.fields)
	c.args = append(c.args[:0], key)
	for f := range c.fields {
		c.args = append(c.args, all[f*c.length:(f+1)*c.length])
	}
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
	var length int64
	if c.m.scanDist == distZipfian {
		length = 1 + c.scanLen.next(c.rng)
	} else {
		length = 1 + c.rng.Int64N(int64(c.m.maxScan))
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
