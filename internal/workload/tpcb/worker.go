package tpcb

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/randgen"
	"github.com/pgarena/pgarena/internal/workload"
)

// variable indexes the script variables pgbench's builtin scripts set with
// \set.
type variable int

const (
	varAid variable = iota
	varBid
	varTid
	varDelta
	numVars
)

var varNames = [numVars]string{"aid", "bid", "tid", "delta"}

// statement is one SQL command of a builtin script, parsed from pgbench's
// own text with :variables once, at package init.
type statement struct {
	label string // for error messages
	name  string // prepared statement name (prepared protocol)
	// pieces of the simple-protocol text around the variables:
	// pieces[0] vars[0] pieces[1] ... vars[n-1] pieces[n]
	pieces []string
	// extended-protocol text with $1..$n for vars, in order of first
	// appearance, as pgbench's parseQuery numbers them.
	ext  string
	vars []variable // one per $n
	refs []int      // for each piece boundary, the index into vars
}

// parse turns pgbench script text ("... WHERE aid = :aid;") into a
// statement.
func parse(label, name, text string) *statement {
	s := &statement{label: label, name: name}
	var ext strings.Builder
	rest := text
	for {
		i := strings.IndexByte(rest, ':')
		if i < 0 {
			s.pieces = append(s.pieces, rest)
			ext.WriteString(rest)
			break
		}
		v, n := matchVar(rest[i+1:])
		if n == 0 {
			panic("tpcb: unknown variable in " + text)
		}
		s.pieces = append(s.pieces, rest[:i])
		ext.WriteString(rest[:i])
		idx := -1
		for j, have := range s.vars {
			if have == v {
				idx = j
			}
		}
		if idx < 0 {
			s.vars = append(s.vars, v)
			idx = len(s.vars) - 1
		}
		s.refs = append(s.refs, idx)
		ext.WriteString("$" + strconv.Itoa(idx+1))
		rest = rest[i+1+n:]
	}
	s.ext = ext.String()
	return s
}

func matchVar(s string) (variable, int) {
	for v, name := range varNames {
		if strings.HasPrefix(s, name) && (len(s) == len(name) || !isIdent(s[len(name)])) {
			return variable(v), len(name)
		}
	}
	return 0, 0
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// protocol is how statements are sent, chosen from the connection's
// DefaultQueryExecMode to match pgbench's -M.
type protocol int

const (
	// protoSimple: the simple query protocol with values written into the
	// text, as pgbench -M simple (its default).
	protoSimple protocol = iota
	// protoExtended: Parse/Bind/Describe/Execute/Sync of an unnamed
	// statement with text parameters whose types the server infers, as
	// pgbench -M extended (libpq's PQsendQueryParams).
	protoExtended
	// protoPrepared: named statements prepared once per connection, then
	// Bind/Describe/Execute/Sync with text parameters, as pgbench -M
	// prepared (PQsendQueryPrepared).
	protoPrepared
)

func protocolOf(mode pgx.QueryExecMode) protocol {
	switch mode {
	case pgx.QueryExecModeSimpleProtocol:
		return protoSimple
	case pgx.QueryExecModeExec, pgx.QueryExecModeDescribeExec:
		return protoExtended
	default: // QueryExecModeCacheStatement, QueryExecModeCacheDescribe
		return protoPrepared
	}
}

// worker runs one script for one client. It keeps every buffer it needs so
// that a transaction allocates nothing of its own: the SQL text (simple
// protocol) is written with strconv.AppendInt into buf, parameters
// (extended and prepared) are the same decimal texts, and statements go
// straight to pgconn. BenchmarkDo shows 0 allocations per transaction with
// an uncancellable context; what remains otherwise is pgconn's: about 4
// per statement for watching a cancellable context (context.AfterFunc),
// and with the extended protocols 1-2 per statement for the row
// description of results.
type worker struct {
	script string
	run    func(ctx context.Context, c *worker) error
	rng    *rand.Rand
	scale  int64

	conn     *pgx.Conn // the connection proto and prepared refer to
	proto    protocol
	prepared bool

	text   [numVars][]byte
	digits [numVars][24]byte
	params [4][]byte
	buf    []byte
}

func newWorker(script string, scale int64, rng *rand.Rand) *worker {
	w := &worker{script: script, rng: rng, scale: scale, buf: make([]byte, 0, 256)}
	switch script {
	case ScriptSimpleUpdate:
		w.run = simpleUpdate
	case ScriptSelectOnly:
		w.run = selectOnly
	default:
		w.run = tpcbLike
	}
	return w
}

// Next implements workload.Worker: there is one transaction type.
func (w *worker) Next() workload.TxType { return 0 }

// Do implements workload.Worker: one execution of the script, one round
// trip per statement like pgbench (no pipelining). On error the transaction
// has been rolled back, or the connection closed if that failed.
func (w *worker) Do(ctx context.Context, conn *pgx.Conn, _ workload.TxType) error {
	if conn != w.conn {
		// A new connection (first use, reconnect, -C): read its protocol
		// once; Config() copies the configuration.
		w.conn = conn
		w.proto = protocolOf(conn.Config().DefaultQueryExecMode)
		w.prepared = false
	}
	if w.proto == protoPrepared && !w.prepared {
		if err := w.prepare(ctx); err != nil {
			return err
		}
	}
	err := w.run(ctx, w)
	if err != nil {
		w.cleanup(ctx)
		return fmt.Errorf("%s: %w", w.script, err)
	}
	return nil
}

// draw sets a variable as pgbench's "\set v random(lo, hi)".
func (w *worker) draw(v variable, lo, hi int64) {
	n := randgen.Uniform(w.rng, lo, hi)
	w.text[v] = strconv.AppendInt(w.digits[v][:0], n, 10)
}

// exec sends one statement and reads (and discards) its result, as pgbench
// does for commands without \gset.
func (w *worker) exec(ctx context.Context, s *statement) error {
	pc := w.conn.PgConn()
	var err error
	switch w.proto {
	case protoSimple:
		b := append(w.buf[:0], s.pieces[0]...)
		for i, r := range s.refs {
			b = append(b, w.text[s.vars[r]]...)
			b = append(b, s.pieces[i+1]...)
		}
		w.buf = b
		// pgconn copies the text into its send buffer before Exec
		// returns and keeps no reference to it, so a string over w.buf is
		// safe and saves a copy.
		err = pc.Exec(ctx, unsafe.String(unsafe.SliceData(b), len(b))).Close()
	case protoExtended:
		_, err = pc.ExecParams(ctx, s.ext, w.paramsOf(s), nil, nil, nil).Close()
	case protoPrepared:
		_, err = pc.ExecPrepared(ctx, s.name, w.paramsOf(s), nil, nil).Close()
	}
	if err != nil {
		if w.proto == protoPrepared {
			// e.g. a pooler or DISCARD lost the statements: prepare
			// again next time
			w.prepared = false
		}
		return fmt.Errorf("%s: %w", s.label, err)
	}
	return nil
}

func (w *worker) paramsOf(s *statement) [][]byte {
	p := w.params[:len(s.vars)]
	for i, v := range s.vars {
		p[i] = w.text[v]
	}
	return p
}

// prepare prepares every statement of the script on the current
// connection, as pgbench -M prepared does on first use.
func (w *worker) prepare(ctx context.Context) error {
	pc := w.conn.PgConn()
	for _, s := range scriptStatements[w.script] {
		_, err := pc.Prepare(ctx, s.name, s.ext, nil)
		if isDuplicatePrepared(err) {
			// left by an earlier worker on this connection: replace it
			if err = pc.Exec(ctx, "DEALLOCATE "+s.name).Close(); err == nil {
				_, err = pc.Prepare(ctx, s.name, s.ext, nil)
			}
		}
		if err != nil {
			w.cleanup(ctx)
			return fmt.Errorf("%s: prepare %s: %w", w.script, s.label, err)
		}
	}
	w.prepared = true
	return nil
}

// cleanup makes sure no transaction is left open after an error: it rolls
// back, and closes the connection if the rollback fails. The rollback gets
// its own short deadline so it also runs when ctx was cancelled.
func (w *worker) cleanup(ctx context.Context) {
	pc := w.conn.PgConn()
	if pc.IsClosed() || pc.TxStatus() == 'I' {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := pc.Exec(rctx, "ROLLBACK").Close(); err != nil || pc.TxStatus() != 'I' {
		_ = pc.Close(rctx)
	}
}

// scriptStatements lists each script's statements, for preparing.
var scriptStatements = map[string][]*statement{
	ScriptTPCBLike:     {stmtBegin, stmtUpdateAccounts, stmtSelectAccounts, stmtUpdateTellers, stmtUpdateBranches, stmtInsertHistory, stmtEnd},
	ScriptSimpleUpdate: {stmtBegin, stmtUpdateAccounts, stmtSelectAccounts, stmtInsertHistory, stmtEnd},
	ScriptSelectOnly:   {stmtSelectAccounts},
}

// The statements of pgbench 15's builtin scripts (builtin_script[] in
// pgbench.c), verbatim.
var (
	stmtBegin          = parse("begin", "pgarena_tpcb_begin", "BEGIN;")
	stmtUpdateAccounts = parse("update pgbench_accounts", "pgarena_tpcb_upd_accounts", "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;")
	stmtSelectAccounts = parse("select pgbench_accounts", "pgarena_tpcb_sel_accounts", "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;")
	stmtUpdateTellers  = parse("update pgbench_tellers", "pgarena_tpcb_upd_tellers", "UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;")
	stmtUpdateBranches = parse("update pgbench_branches", "pgarena_tpcb_upd_branches", "UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;")
	stmtInsertHistory  = parse("insert pgbench_history", "pgarena_tpcb_ins_history", "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);")
	stmtEnd            = parse("end", "pgarena_tpcb_end", "END;")
)
