package sysbench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"unsafe"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/roundtrip"
	"github.com/pgarena/pgarena/internal/workload"
)

// The protocols of -M (workload.Protocol); prepared is sysbench's pgsql
// driver's way: every statement prepared once per connection.
const (
	protoSimple   = workload.ProtocolSimple
	protoExtended = workload.ProtocolExtended
	protoPrepared = workload.ProtocolPrepared
)

// binaryResults asks for results in binary, as sysbench's PQexecPrepared
// does (resultFormat 1).
var binaryResults = []int16{1}

// worker runs one client's events. It keeps its statements and parameter
// buffers, so an event allocates nothing of its own beyond pgconn's.
type worker struct {
	w    *Workload
	id   int
	rng  *rand.Rand
	dist *distribution
	size uint32 // --table-size, the ids drawn

	stmts         [][numClasses]*statement // [table-1][class], made on first use
	begin, commit *statement

	pc    *pgconn.PgConn // the connection (UsePgConn)
	proto workload.Protocol
	gen   uint64 // connection generation, for statement.gen
	ready bool   // -M prepared: the statements are prepared on pc

	params [][]byte // the current statement's parameter values (text)
	bufs   [][]byte // backing storage of params
	text   []byte   // simple protocol statement text
}

func newWorker(w *Workload, id int, rng *rand.Rand) *worker {
	n := max(4, w.randomPoints, 2*w.numberOfRanges)
	k := &worker{w: w, id: id, rng: rng, dist: &w.dist, size: uint32(max(w.tableSize, 1)),
		stmts:  make([][numClasses]*statement, w.tables),
		begin:  newStatement("begin", "pgarena_sb_begin", "BEGIN", nil),
		commit: newStatement("commit", "pgarena_sb_commit", "COMMIT", nil),
		params: make([][]byte, n), bufs: make([][]byte, n), text: make([]byte, 0, 512)}
	for i := range k.bufs {
		k.bufs[i] = make([]byte, 0, cLen)
	}
	return k
}

// Next implements workload.Worker: one transaction type, the test.
func (k *worker) Next() workload.TxType { return 0 }

// Do implements workload.Worker: DoPgConn on conn's PgConn.
func (k *worker) Do(ctx context.Context, conn *pgx.Conn, tx workload.TxType) error {
	if pc := conn.PgConn(); pc != k.pc {
		k.UsePgConn(pc, workload.ProtocolOf(conn.Config().DefaultQueryExecMode))
	}
	return k.DoPgConn(ctx, tx)
}

// UsePgConn implements workload.PgConnWorker: pc is the worker's
// connection, proto its protocol; under -M prepared the next DoPgConn
// prepares the statements first.
func (k *worker) UsePgConn(pc *pgconn.PgConn, proto workload.Protocol) {
	k.pc, k.proto, k.gen = pc, proto, k.gen+1
	k.ready = proto != protoPrepared
}

// DoPgConn implements workload.PgConnWorker: one event of the test. On
// error the transaction has been rolled back (or the connection closed).
func (k *worker) DoPgConn(ctx context.Context, _ workload.TxType) error {
	if !k.ready {
		if err := k.prepareConn(ctx); err != nil {
			return err
		}
	}
	if err := k.event(ctx); err != nil {
		return k.failed(ctx, err)
	}
	return nil
}

// prepareConn prepares the statements on a new connection (-M prepared);
// after a failure the next call tries again. Not inlined, nor is failed:
// DoPgConn's frame is on every statement's stack, below which a client's
// deepest path is just under a step of Go's stack sizes (see
// TestClientStackStaysSmall in internal/session).
//
//go:noinline
func (k *worker) prepareConn(ctx context.Context) error {
	if err := k.prepareAll(ctx); err != nil {
		return fmt.Errorf("%s: %w", k.w.test, err)
	}
	k.ready = true
	return nil
}

// failed ends the transaction that failed with err.
//
//go:noinline
func (k *worker) failed(ctx context.Context, err error) error {
	workload.EndFailedPgConn(ctx, k.pc)
	return fmt.Errorf("%s: %w", k.w.test, err)
}

// event is the event() function of the test's Lua script.
func (k *worker) event(ctx context.Context) error {
	w := k.w
	switch w.test {
	case TestPointSelect:
		return k.pointSelects(ctx, 1) // oltp_point_select.lua: point_selects=1
	case TestUpdateIndex:
		return k.indexUpdates(ctx)
	case TestUpdateNonIndex:
		return k.nonIndexUpdates(ctx)
	case TestDelete:
		st := k.stmt(clDelete, k.table())
		k.setInt(0, k.id0())
		return k.exec(ctx, st)
	case TestInsert:
		return k.insert(ctx)
	case TestSelectRandomPoints:
		return k.randomPoints(ctx)
	case TestSelectRandomRanges:
		return k.randomRanges(ctx)
	}
	// oltp_read_write, oltp_read_only, oltp_write_only
	if !w.skipTrx {
		if err := k.exec(ctx, k.begin); err != nil {
			return err
		}
	}
	if w.test != TestWriteOnly {
		if err := k.pointSelects(ctx, w.pointSelects); err != nil {
			return err
		}
		if w.rangeSelects {
			for _, r := range []struct {
				c class
				n int
			}{{clSimpleRange, w.simpleRanges}, {clSumRange, w.sumRanges}, {clOrderRange, w.orderRanges}, {clDistinctRange, w.distinctRanges}} {
				if err := k.ranges(ctx, r.c, r.n); err != nil {
					return err
				}
			}
		}
	}
	if w.test != TestReadOnly {
		if err := k.indexUpdates(ctx); err != nil {
			return err
		}
		if err := k.nonIndexUpdates(ctx); err != nil {
			return err
		}
		if err := k.deleteInserts(ctx); err != nil {
			return err
		}
	}
	if !w.skipTrx {
		return k.exec(ctx, k.commit)
	}
	return nil
}

// table is oltp_common.lua's get_table_num: uniform over the tables.
func (k *worker) table() int { return int(uniform(k.rng, 1, uint32(k.w.tables))) }

// id0 is get_id: the --rand-type distribution over [1, table-size].
func (k *worker) id0() int64 { return int64(k.dist.draw(k.rng, 1, k.size)) }

// execute_point_selects: n point selects on one table.
func (k *worker) pointSelects(ctx context.Context, n int) error {
	st := k.stmt(clPointSelect, k.table())
	for range n {
		k.setInt(0, k.id0())
		if err := k.exec(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

// execute_range: n ranges of --range-size ids on one table.
func (k *worker) ranges(ctx context.Context, c class, n int) error {
	if n == 0 {
		return nil
	}
	st := k.stmt(c, k.table())
	for range n {
		id := k.id0()
		k.setInt(0, id)
		k.setInt(1, id+int64(k.w.rangeSize)-1)
		if err := k.exec(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

// execute_index_updates.
func (k *worker) indexUpdates(ctx context.Context) error {
	if k.w.indexUpdates == 0 {
		return nil
	}
	st := k.stmt(clIndexUpdate, k.table())
	for range k.w.indexUpdates {
		k.setInt(0, k.id0())
		if err := k.exec(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

// execute_non_index_updates: c set to a new random value.
func (k *worker) nonIndexUpdates(ctx context.Context) error {
	if k.w.nonIndexUpdates == 0 {
		return nil
	}
	st := k.stmt(clNonIndexUpdate, k.table())
	for range k.w.nonIndexUpdates {
		k.setGroups(0, cGroups)
		k.setInt(1, k.id0())
		if err := k.exec(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

// execute_delete_inserts: delete a row and insert it again with a new k,
// c and pad.
func (k *worker) deleteInserts(ctx context.Context) error {
	if k.w.deleteInserts == 0 {
		return nil
	}
	n := k.table()
	del, ins := k.stmt(clDelete, n), k.stmt(clInsert, n)
	for range k.w.deleteInserts {
		id, kv := k.id0(), k.id0()
		k.setInt(0, id)
		if err := k.exec(ctx, del); err != nil {
			return err
		}
		k.setInt(0, id)
		k.setInt(1, kv)
		k.setGroups(2, cGroups)
		k.setGroups(3, padGroups)
		if err := k.exec(ctx, ins); err != nil {
			return err
		}
	}
	return nil
}

// insert is oltp_insert.lua's event: with --auto-inc the id comes from
// the SERIAL, without it from sysbench.rand.unique() - 2^31.
func (k *worker) insert(ctx context.Context) error {
	n := k.table()
	kv := k.id0()
	if k.w.autoInc {
		k.setInt(0, kv)
		k.setGroups(1, cGroups)
		k.setGroups(2, padGroups)
		return k.exec(ctx, k.stmt(clInsertAuto, n))
	}
	k.setInt(0, int64(k.w.unique.next())-1<<31)
	k.setInt(1, kv)
	k.setGroups(2, cGroups)
	k.setGroups(3, padGroups)
	return k.exec(ctx, k.stmt(clInsert, n))
}

// segment is the part [rmin, rmax] of the k range of this client, as
// select_random_*.lua give each thread table_size/threads of it.
func (k *worker) segment() (uint32, uint32) {
	clients := max(k.w.clients, 1)
	rlen := float64(k.w.tableSize) / float64(clients)
	rmin := rlen * float64(k.id%clients)
	return uint32(rmin), uint32(rmin + rlen)
}

// randomPoints is select_random_points.lua's event.
func (k *worker) randomPoints(ctx context.Context) error {
	lo, hi := k.segment()
	for i := range k.w.randomPoints {
		k.setInt(i, int64(k.dist.draw(k.rng, lo, hi)))
	}
	return k.exec(ctx, k.stmt(clRandomPoints, 1))
}

// randomRanges is select_random_ranges.lua's event.
func (k *worker) randomRanges(ctx context.Context) error {
	lo, hi := k.segment()
	for i := range k.w.numberOfRanges {
		v := int64(k.dist.draw(k.rng, lo, hi))
		k.setInt(2*i, v)
		k.setInt(2*i+1, v+int64(k.w.delta))
	}
	return k.exec(ctx, k.stmt(clRandomRanges, 1))
}

func (k *worker) stmt(c class, table int) *statement {
	s := k.stmts[table-1][c]
	if s == nil {
		s = k.w.classStatement(c, table)
		k.stmts[table-1][c] = s
	}
	return s
}

func (k *worker) setInt(i int, v int64) {
	k.bufs[i] = strconv.AppendInt(k.bufs[i][:0], v, 10)
	k.params[i] = k.bufs[i]
}

func (k *worker) setGroups(i, groups int) {
	k.bufs[i] = appendGroups(k.bufs[i][:0], k.rng, groups)
	k.params[i] = k.bufs[i]
}

// exec sends one statement and discards its result, one round trip like
// sysbench.
func (k *worker) exec(ctx context.Context, st *statement) error {
	pc := k.pc
	params := k.params[:len(st.oids)]
	var err error
	switch k.proto {
	case protoSimple:
		b := append(k.text[:0], st.pieces[0]...)
		for i, r := range st.refs {
			b = append(b, params[r]...)
			b = append(b, st.pieces[i+1]...)
		}
		k.text = b
		// pgconn copies the text into its send buffer before Exec
		// returns and keeps no reference to it.
		err = pc.Exec(ctx, unsafe.String(unsafe.SliceData(b), len(b))).Close()
	case protoExtended:
		_, err = pc.ExecParams(ctx, st.sql, params, st.oids, nil, nil).Close()
	case protoPrepared:
		if st.gen != k.gen {
			if err := k.prepare(ctx, st); err != nil {
				return err
			}
		}
		if roundtrip.Usable(ctx, pc) {
			// One round trip without pgconn's per-statement machinery.
			if st.lean == nil {
				st.lean = roundtrip.NewPrepared(st.name, binaryResults)
			}
			err = st.lean.Exec(pc, params)
		} else {
			// The statement's description is known: no Describe per
			// execution, no RowDescription to decode.
			_, err = pc.ExecStatement(ctx, st.sd, params, nil, binaryResults).Close()
		}
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "26000" { // invalid_sql_statement_name
			st.gen = 0 // a pooler or DISCARD lost it: prepare again next time
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", st.label, err)
	}
	return nil
}

// prepareAll prepares every statement of the test on every table, outside
// any transaction, as sysbench's thread_init does on connecting.
func (k *worker) prepareAll(ctx context.Context) error {
	var all []*statement
	if k.w.usesTrx() {
		all = append(all, k.begin, k.commit)
	}
	for n := 1; n <= len(k.stmts); n++ {
		for _, c := range k.w.classes() {
			all = append(all, k.stmt(c, n))
		}
	}
	for _, st := range all {
		if err := k.prepare(ctx, st); err != nil {
			workload.EndFailedPgConn(ctx, k.pc)
			return err
		}
	}
	return nil
}

// prepare prepares st on the current connection, replacing a statement of
// the same name left there by an earlier worker.
func (k *worker) prepare(ctx context.Context, st *statement) error {
	pc := k.pc
	sd, err := pc.Prepare(ctx, st.name, st.sql, st.oids)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P05" { // duplicate_prepared_statement
		if err = pc.Exec(ctx, "DEALLOCATE "+st.name).Close(); err == nil {
			sd, err = pc.Prepare(ctx, st.name, st.sql, st.oids)
		}
	}
	if err != nil {
		return fmt.Errorf("prepare %s: %w", st.label, err)
	}
	st.gen, st.sd = k.gen, sd
	return nil
}
