package script

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unsafe"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/roundtrip"
	"github.com/pgarena/pgarena/internal/workload"
)

// shellTimeout bounds a \shell or \setshell command.
const shellTimeout = 60 * time.Second

// The protocols of -M (workload.Protocol), by their short names here.
const (
	protoSimple   = workload.ProtocolSimple
	protoExtended = workload.ProtocolExtended
	protoPrepared = workload.ProtocolPrepared
)

// Runner runs a program's scripts for one client. It keeps its buffers
// from one transaction to the next: running a script of \set and SQL
// commands allocates nothing of its own.
//
// With hundreds of clients a client's memory is out of the CPU's cache
// when its turn comes again, and each cache line a transaction touches is
// a miss: the fields a transaction uses come first, in the struct's first
// three cache lines (its size is a multiple of 64 bytes, checked below, so
// Go's allocator puts it at the start of a line). A Runner is the client's
// workload.Worker itself (NewWorker): no wrapper's frame or line between
// the driver and the script.
type Runner struct {
	// The first cache line.
	prog    *Program
	chooser *Chooser // NewWorker's: picks the scripts
	id      int      // the client, for chooser
	// txRng is the random state when the transaction started; a retry
	// (Retry) starts from it again, as pgbench restores it.
	txRng prng
	pc    *pgconn.PgConn // the connection (UsePgConn)
	proto workload.Protocol
	retry bool
	// The second cache line.
	buf []byte
	// simple: the one-round-trip executor of simple-protocol commands
	// whose results are not assigned
	simple  roundtrip.Simple
	script  int // running script, command (for debug())
	command int
	// The third cache line (state's names, debug and where are not used
	// per transaction).
	hooks workload.Hooks
	st    state

	scripts []scriptState // per script: its prepared commands on conn

	params  [][]byte
	pending []int // pipeline: commands sent, -1 for a sync
	out     [][]byte
	// the last result read for \gset
	gsetRows   int
	gsetFields []pgconn.FieldDescription
	_          [runnerPad]byte
}

// scriptState is a runner's state of one script's prepared commands on its
// connection, all kept together: a prepared command's run touches a line or
// two of it, not one per kind of state.
type scriptState struct {
	allPrepared bool // prepareAll ran for the script on conn
	cmds        []cmdState
}

// cmdState is a runner's state of one prepared command.
type cmdState struct {
	prepared bool // on conn
	// described: the command's description (nil if it was prepared earlier
	// on conn, under its name, and is not described)
	described *pgconn.StatementDescription
	// lean: the one-round-trip executor used when the results are not
	// assigned, made when prepare first prepares the command
	lean *roundtrip.Prepared
}

// unprepare forgets that the script's commands are prepared.
func (s *scriptState) unprepare() {
	s.allPrepared = false
	for i := range s.cmds {
		s.cmds[i].prepared, s.cmds[i].described = false, nil
	}
}

// runnerPad pads Runner to a multiple of 64 bytes on 64-bit platforms; the array's length
// below fails to compile when it does not.
const runnerPad = 24

var _ [0]struct{} = [unsafe.Sizeof(Runner{}) % 64 * (unsafe.Sizeof(uintptr(0)) / 8)]struct{}{} // 64-bit platforms

// NewRunner makes the runner of client id of clients, its random
// functions seeded as pgbench seeds them from seed (--random-seed), its
// variables the program's defaults plus :client_id, :random_seed and
// :default_seed unless given.
func (p *Program) NewRunner(id, clients int, seed uint64, debug io.Writer) *Runner {
	// buf is made by text, on first use: the lean simple path writes its
	// text into r.simple's buffer and never needs it.
	r := &Runner{prog: p}
	r.st.names = p.syms.names
	r.st.vars = make([]variable, len(p.syms.names))
	r.st.reserveText(p.scripts)
	r.st.debug = debug
	r.st.where = func() string { return fmt.Sprintf("script=%d,command=%d", r.script, r.command+1) }
	var defaultSeed int64
	r.st.rng, defaultSeed = p.seeds.clientSeeds(seed, id, clients)
	for _, d := range p.defaults {
		if d.text != nil {
			r.st.setText(d.slot, d.text)
		} else {
			r.st.setValue(d.slot, d.val)
		}
	}
	setIfUnset := func(name string, v int64) {
		if i, ok := p.syms.idx[name]; ok && !r.st.vars[i].set {
			r.st.setValue(i, intVal(v))
		}
	}
	setIfUnset("client_id", int64(id))
	setIfUnset("default_seed", defaultSeed)
	setIfUnset("random_seed", int64(seed))
	r.scripts = make([]scriptState, len(p.scripts))
	for i, s := range p.scripts {
		r.scripts[i].cmds = make([]cmdState, len(s.cmds))
	}
	return r
}

// Retry implements workload.Retrier: the next Do re-runs the transaction
// that just failed, drawing the same random values (pgbench restores the
// client's random state saved at the transaction's start).
func (r *Runner) Retry() { r.retry = true }

// SetHooks implements workload.HookUser: the driver's sleep and statement
// timing.
func (r *Runner) SetHooks(h workload.Hooks) { r.hooks = h }

// The cold parts of Do are functions of their own, kept out of line: Do
// is on every client's stack below the statement's read, and its frame
// (the size of everything inlined into it) counts against the 2 KB a
// client goroutine's stack starts with (SmallStack; TestClientStackStaysSmall
// in internal/session guards it; see docs/benchmarks.md).

// UsePgConn implements workload.PgConnWorker: pc is the runner's
// connection, proto its protocol; nothing is prepared on it yet.
func (r *Runner) UsePgConn(pc *pgconn.PgConn, proto workload.Protocol) {
	r.pc, r.proto = pc, proto
	for i := range r.scripts {
		r.scripts[i].unprepare()
	}
	if proto != protoExtended {
		roundtrip.Ready(pc) // exec's lean paths read their answers in netio's buffer
	}
}

// SmallStack implements workload.SmallStacker: true when the scripts hold
// only SQL commands whose rows are discarded and that leave the
// transaction status as it was, \set and \if: a client then waits for
// each answer in exec's lean path (roundtrip's readQuiet). \gset, \aset,
// \sleep, shell commands, pipelines and a transaction block's BEGIN and
// END (whose answers pgconn reads itself, to learn the new status) go
// deeper.
func (r *Runner) SmallStack() bool {
	for _, s := range r.prog.scripts {
		for i := range s.cmds {
			switch c := &s.cmds[i]; c.kind {
			case cSQL:
				if c.assign != assignNone || changesTxStatus(c.text) {
					return false
				}
			case cSet, cIf, cElif, cElse, cEndif:
			default:
				return false
			}
		}
	}
	return true
}

// changesTxStatus reports whether SQL text starts with a statement that
// begins or ends a transaction block.
func changesTxStatus(text string) bool {
	word := strings.TrimLeft(text, " \t\r\n")
	if i := strings.IndexFunc(word, func(r rune) bool { return !unicode.IsLetter(r) }); i >= 0 {
		word = word[:i]
	}
	for _, w := range []string{"begin", "start", "commit", "end", "rollback", "abort", "prepare"} {
		if strings.EqualFold(word, w) {
			return true
		}
	}
	return false
}

// failed ends the transaction that failed with err in script s and names
// the command that failed.
//
//go:noinline
func (r *Runner) failed(ctx context.Context, s *Script, err error) error {
	workload.EndFailedPgConn(ctx, r.pc)
	if !errors.Is(err, workload.ErrStopped) {
		c := &s.cmds[r.command]
		// the command's index (numbered as Script.Commands), where it is
		// (file:line: text) and what went wrong
		err = &workload.StatementError{Statement: r.command, Err: fmt.Errorf("%s:%d: %s: %w", s.Name, c.line, c.text, err)}
	}
	if r.prog.errPrefix != "" {
		err = fmt.Errorf("%s: %w", r.prog.errPrefix, err)
	}
	return err
}

// Do implements workload.Worker: DoPgConn on conn's PgConn.
func (r *Runner) Do(ctx context.Context, conn *pgx.Conn, tx workload.TxType) error {
	if pc := conn.PgConn(); pc != r.pc {
		r.UsePgConn(pc, workload.ProtocolOf(conn.Config().DefaultQueryExecMode))
	}
	return r.DoPgConn(ctx, tx)
}

// DoPgConn implements workload.PgConnWorker: it runs script tx once. On
// error no transaction is left open: it was rolled back, or the
// connection closed.
func (r *Runner) DoPgConn(ctx context.Context, tx workload.TxType) error {
	s := r.prog.scripts[tx]
	r.script = int(tx)
	if r.retry {
		r.st.rng, r.retry = r.txRng, false
	} else {
		r.txRng = r.st.rng
	}
	if r.proto == protoPrepared && !r.scripts[tx].allPrepared {
		r.prepareAll(ctx, s)
	}
	// step reports the end of command i to the driver (-r); read once, so
	// that after a statement's wait only Do's frame is loaded again, not
	// a line of r.
	step := r.hooks.Step
	var pl *pgconn.Pipeline
	for pc := 0; pc < len(s.cmds); {
		r.command = pc
		c := &s.cmds[pc]
		next := pc + 1
		var err error
		if c.kind == cSQL && pl == nil {
			err = r.exec(ctx, s.index, pc, c)
		} else {
			next, err = r.other(ctx, s, pc, c, &pl)
		}
		if err != nil {
			return r.failed(ctx, s, err)
		}
		if step != nil {
			step(pc)
		}
		pc = next
	}
	if r.pc.TxStatus() != 'I' {
		return r.leftOpen(ctx, s)
	}
	return nil
}

// other runs command c at pc of s other than an SQL command outside a
// pipeline (DoPgConn's own): the index of the command to run next. It
// keeps the rarer commands' locals out of DoPgConn's frame, which is on
// every client's deepest stack.
//
//go:noinline
func (r *Runner) other(ctx context.Context, s *Script, pc int, c *command, pl **pgconn.Pipeline) (next int, err error) {
	next = pc + 1
	switch c.kind {
	case cSQL:
		err = r.send(*pl, s.index, pc, c)
	case cSet:
		var v value
		if v, err = r.st.eval(c.expr); err == nil {
			r.st.setValue(c.slot, v)
		}
	case cIf:
		next, err = r.branch(s.cmds, pc, c)
	case cElif, cElse:
		next = c.end + 1 // the end of a branch that ran
	case cEndif:
	case cSleep:
		err = r.sleep(c)
	case cShell, cSetShell:
		err = r.shell(ctx, c)
	case cStartPipeline:
		if r.proto == protoSimple {
			err = errors.New("cannot use pipeline mode with the simple query protocol")
		} else if err = r.preparePipeline(ctx, s, pc); err == nil {
			*pl = r.pc.StartPipeline(ctx)
			r.pending = r.pending[:0]
		}
	case cSyncPipeline:
		(*pl).SendPipelineSync()
		r.pending = append(r.pending, -1)
	case cEndPipeline:
		err = r.endPipeline(*pl, s)
		*pl = nil
	}
	return next, err
}

// ErrOpenAtEnd is a script that ended with its transaction still open:
// pgbench aborts the client ("end of script reached without completing the
// last transaction"); the transaction is rolled back and counted failed.
var ErrOpenAtEnd = errors.New("end of script reached without completing the last transaction (rolled back)")

// leftOpen fails the run of s that ended inside a transaction block.
//
//go:noinline
func (r *Runner) leftOpen(ctx context.Context, s *Script) error {
	workload.EndFailedPgConn(ctx, r.pc)
	err := fmt.Errorf("%s: %w", s.Name, ErrOpenAtEnd)
	if r.prog.errPrefix != "" {
		err = fmt.Errorf("%s: %w", r.prog.errPrefix, err)
	}
	return err
}

// branch evaluates \if c at pc, and the \elif after it while they are
// false: the index of the first command to run.
func (r *Runner) branch(cmds []command, pc int, c *command) (int, error) {
	for {
		v, err := r.st.eval(c.expr)
		if err != nil {
			return 0, err
		}
		if v.truth() {
			return pc + 1, nil
		}
		pc = c.next
		c = &cmds[pc]
		if c.kind != cElif {
			return pc + 1, nil // \else runs its branch; \endif ends
		}
		r.command = pc
	}
}

func (r *Runner) sleep(c *command) error {
	n := c.sleepConst
	if c.sleepSlot >= 0 {
		v, err := r.st.get(c.sleepSlot)
		if err != nil {
			return err
		}
		if n, err = v.toInt(); err != nil {
			return fmt.Errorf("\\sleep: %w", err)
		}
	}
	if n <= 0 {
		return nil
	}
	d, err := sleepTime(n, c.unit)
	if err != nil {
		return fmt.Errorf("\\sleep :%s: %w", r.st.names[c.sleepSlot], err)
	}
	if r.hooks.Sleep == nil {
		return errors.New("\\sleep: the driver gives no clock")
	}
	if !r.hooks.Sleep(d) {
		return workload.ErrStopped
	}
	return nil
}

func (r *Runner) shell(ctx context.Context, c *command) error {
	words := make([]string, 0, len(c.shell))
	for _, a := range c.shell {
		if a.slot < 0 {
			words = append(words, a.lit)
			continue
		}
		t, ok := r.st.text(a.slot)
		if !ok {
			return fmt.Errorf("undefined variable %q", r.st.names[a.slot])
		}
		words = append(words, string(t))
	}
	sctx, cancel := context.WithTimeout(ctx, shellTimeout)
	defer cancel()
	cmd := exec.CommandContext(sctx, "/bin/sh", "-c", strings.Join(words, " "))
	if c.kind == cShell {
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("shell command failed: %v: %s", err, bytes.TrimSpace(out))
		}
		return nil
	}
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("shell command failed: %v", err)
	}
	line, _, _ := strings.Cut(string(out), "\n")
	n, perr := strconv.ParseInt(strings.TrimSpace(line), 10, 32)
	if perr != nil {
		return fmt.Errorf("shell command must return an integer (not %q)", line)
	}
	r.st.setValue(c.slot, intVal(n))
	return nil
}

// text writes the simple-protocol text of c into r.buf. An unset variable
// stays as ":name", as in pgbench.
func (r *Runner) text(c *command) string {
	r.st.formatText(c.refs)
	b := r.appendText(r.buf[:0], c)
	r.buf = b
	// pgconn copies the text into its send buffer and keeps no reference
	// to it, so a string over r.buf is safe and saves a copy.
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// appendText appends the simple-protocol text of c to b (see text), with
// the text of its variables that formatText made. Not inlined: its
// appends' temporaries would be in exec's frame, under the answer's wait.
//
//go:noinline
func (r *Runner) appendText(b []byte, c *command) []byte {
	b = append(b, c.pieces[0]...)
	for i, slot := range c.refs {
		if x := &r.st.vars[slot]; x.hasText {
			b = append(b, x.text...)
		} else {
			b = append(b, ':')
			b = append(b, r.st.names[slot]...)
		}
		b = append(b, c.pieces[i+1]...)
	}
	return b
}

// paramsOf gives c's parameters: the variables' texts, NULL when unset.
func (r *Runner) paramsOf(c *command) [][]byte {
	if cap(r.params) < len(c.refs) {
		r.params = make([][]byte, len(c.refs))
	}
	p := r.params[:len(c.refs)]
	for i, slot := range c.refs {
		if x := &r.st.vars[slot]; x.hasText {
			p[i] = x.text
		} else if t, ok := r.st.text(slot); ok {
			p[i] = t
		} else {
			p[i] = nil // unset: NULL, as pgbench sends it
		}
	}
	return p
}

func (r *Runner) prepare(ctx context.Context, script, i int, c *command) error {
	st := &r.scripts[script].cmds[i]
	if st.prepared {
		return nil
	}
	pc := r.pc
	sd, err := pc.Prepare(ctx, c.name, c.ext, nil)
	st.described = sd
	if isDuplicatePrepared(err) {
		err = nil // the same text (the name is its hash), prepared earlier on this connection
	}
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	st.prepared = true
	if st.lean == nil {
		st.lean = roundtrip.NewPrepared(c.name, nil) // exec's, made once
	}
	return nil
}

func isDuplicatePrepared(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "42P05"
}

// exec runs one SQL command and reads its results, assigning them for
// \gset and \aset. Only the lean paths (rows discarded: one round trip
// without pgconn's per-statement machinery) are in its own frame, which is
// on every client's deepest stack; pgconn's paths are out of line.
func (r *Runner) exec(ctx context.Context, script, i int, c *command) error {
	pc := r.pc
	switch r.proto {
	case protoSimple:
		if c.assign == assignNone && roundtrip.Usable(ctx, pc) {
			// the text written once, into the Query message
			r.st.formatText(c.refs)
			return r.simple.Run(pc, r.appendText(r.simple.Query(), c))
		}
		return r.execSimple(ctx, pc, c)
	case protoExtended:
		return r.execExtended(ctx, pc, c)
	case protoPrepared:
		if err := r.prepare(ctx, script, i, c); err != nil {
			return err
		}
		var err error
		if c.assign == assignNone && roundtrip.Usable(ctx, pc) {
			err = r.scripts[script].cmds[i].lean.Exec(pc, r.paramsOf(c))
		} else {
			err = r.execPrepared(ctx, pc, script, i, c)
		}
		if err != nil {
			// e.g. DISCARD, or a pooler lost it: prepare the script again
			// before its next run, outside the transaction (a failed
			// PREPARE inside one would abort it)
			r.scripts[script].unprepare()
		}
		return err
	}
	return nil
}

// execExtended runs c with the extended protocol (-M extended).
//
//go:noinline
func (r *Runner) execExtended(ctx context.Context, pc *pgconn.PgConn, c *command) error {
	return r.finish(c, pc.ExecParams(ctx, c.ext, r.paramsOf(c), nil, nil, nil))
}

// execPrepared runs prepared command c through pgconn, for \gset and
// \aset or a connection exec's lean path cannot use.
//
//go:noinline
func (r *Runner) execPrepared(ctx context.Context, pc *pgconn.PgConn, script, i int, c *command) error {
	if sd := r.scripts[script].cmds[i].described; sd != nil {
		// With the statement's result columns known, no Describe per
		// execution (and no RowDescription to decode).
		return r.finish(c, pc.ExecStatement(ctx, sd, r.paramsOf(c), nil, nil))
	}
	return r.finish(c, pc.ExecPrepared(ctx, c.name, r.paramsOf(c), nil, nil))
}

// execSimple runs c with the simple protocol through pgconn's
// MultiResultReader, assigning its results for \gset and \aset.
//
//go:noinline
func (r *Runner) execSimple(ctx context.Context, pc *pgconn.PgConn, c *command) error {
	var err error
	mrr := pc.Exec(ctx, r.text(c))
	if c.assign == assignNone {
		return mrr.Close()
	}
	for mrr.NextResult() {
		if aerr := r.assign(c, mrr.ResultReader(), false); aerr != nil && err == nil {
			err = aerr
		}
	}
	if cerr := mrr.Close(); err == nil {
		err = cerr
	}
	if err == nil && c.assign == assignGset {
		err = r.gsetLast(c)
	}
	return err
}

// finish reads one extended-protocol result.
func (r *Runner) finish(c *command, rr *pgconn.ResultReader) error {
	if c.assign == assignNone {
		_, err := rr.Close()
		return err
	}
	if err := r.assign(c, rr, true); err != nil {
		return err
	}
	if c.assign == assignGset {
		return r.gsetLast(c)
	}
	return nil
}

// assign reads one result of c. \aset assigns the last row of every
// result with rows; \gset keeps the result to assign the last one.
func (r *Runner) assign(c *command, rr *pgconn.ResultReader, last bool) error {
	rows := 0
	r.out = r.out[:0]
	var fields []pgconn.FieldDescription
	for rr.NextRow() {
		// pgbench assigns the last row (of \aset's results with rows)
		if rows == 0 {
			fields = rr.FieldDescriptions()
		}
		r.out = r.out[:0]
		for _, v := range rr.Values() {
			var cp []byte
			if v != nil {
				cp = append([]byte{}, v...)
			}
			r.out = append(r.out, cp)
		}
		rows++
	}
	if _, err := rr.Close(); err != nil {
		return err
	}
	if fields == nil {
		fields = rr.FieldDescriptions()
	}
	r.gsetRows, r.gsetFields = rows, fields
	if c.assign == assignAset && rows > 0 {
		return r.store(c, fields)
	}
	return nil
}

// gsetLast assigns the last result read for \gset: exactly one row.
func (r *Runner) gsetLast(c *command) error {
	if r.gsetRows != 1 {
		return fmt.Errorf("expected one row, got %d", r.gsetRows)
	}
	return r.store(c, r.gsetFields)
}

func (r *Runner) store(c *command, fields []pgconn.FieldDescription) error {
	for i, f := range fields {
		name := c.prefix + f.Name
		slot, ok := r.prog.syms.idx[name]
		if !ok {
			if !validName(name) {
				return fmt.Errorf("invalid variable name %q", name)
			}
			continue // no script reads it
		}
		if r.out[i] == nil {
			r.st.setValue(slot, value{k: kNull})
		} else {
			r.st.setText(slot, r.out[i])
		}
	}
	return nil
}

// prepareAll prepares the script's commands before its first run on a
// connection, outside any transaction: a duplicate name there does no
// harm. A command that cannot be prepared yet (its table is made by an
// earlier command) is prepared before it runs, as pgbench prepares.
//
//go:noinline
func (r *Runner) prepareAll(ctx context.Context, s *Script) {
	r.scripts[s.index].allPrepared = true
	if r.pc.TxStatus() != 'I' {
		return
	}
	for i := range s.cmds {
		if c := &s.cmds[i]; c.kind == cSQL {
			if r.prepare(ctx, s.index, i, c) != nil {
				return
			}
		}
	}
}

// preparePipeline prepares, with the prepared protocol, the commands of
// the pipeline starting at pc before it starts (as pgbench).
func (r *Runner) preparePipeline(ctx context.Context, s *Script, pc int) error {
	if r.proto != protoPrepared {
		return nil
	}
	for i := pc + 1; i < len(s.cmds) && s.cmds[i].kind != cEndPipeline; i++ {
		if s.cmds[i].kind == cSQL {
			if err := r.prepare(ctx, s.index, i, &s.cmds[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// send queues one SQL command on the pipeline.
func (r *Runner) send(pl *pgconn.Pipeline, script, i int, c *command) error {
	if r.proto == protoPrepared {
		pl.SendQueryPrepared(c.name, r.paramsOf(c), nil, nil)
	} else {
		pl.SendQueryParams(c.ext, r.paramsOf(c), nil, nil, nil)
	}
	r.pending = append(r.pending, i)
	return nil
}

// endPipeline syncs and reads every result of the pipeline in order.
func (r *Runner) endPipeline(pl *pgconn.Pipeline, s *Script) error {
	pl.SendPipelineSync()
	r.pending = append(r.pending, -1)
	err := pl.Flush()
	for _, i := range r.pending {
		if err != nil {
			break
		}
		var res any
		res, err = pl.GetResults()
		if err != nil {
			break
		}
		switch v := res.(type) {
		case *pgconn.ResultReader:
			if i < 0 {
				err = errors.New("pipeline: a result where a sync was expected")
				break
			}
			r.command = i
			err = r.finish(&s.cmds[i], v)
		case *pgconn.PipelineSync:
			if i >= 0 {
				err = errors.New("pipeline: a sync where a result was expected")
			}
		}
	}
	if cerr := pl.Close(); err == nil {
		err = cerr
	}
	return err
}
