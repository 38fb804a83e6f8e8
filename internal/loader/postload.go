package loader

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/pgarena/pgarena/internal/workload"
)

// postLoad runs the tables' PostLoad statements on conns, several at
// once:
//   - a table's statements keep their order, except that consecutive
//     CREATE INDEX statements of one table build at once (CREATE INDEX
//     takes a SHARE lock, which another index build does not wait for;
//     ALTER TABLE's lock would make them queue), so any other statement
//     runs alone on its table;
//   - a table's foreign keys (ALTER TABLE ... REFERENCES) come after its
//     other statements and wait for the referenced table's other
//     statements (its keys); a reference the loader cannot name waits for
//     every table's; two foreign keys touching the same table never run at
//     once (their locks would queue, or deadlock on a cycle);
//   - different tables run in parallel, largest first.
func postLoad(ctx context.Context, conns []*pgx.Conn, tables []workload.Table) error {
	p := newPostLoadPlan(tables)
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range conns {
		g.Go(func() error {
			for {
				ts, s, ok := p.take()
				if !ok {
					return nil
				}
				err := execSQL(gctx, c, s)
				p.done(ts, s, err)
				if err != nil {
					return fmt.Errorf("%s: %s: %w", ts.t.Name, s, err)
				}
			}
		})
	}
	return g.Wait()
}

// newPostLoadPlan orders the tables' PostLoad statements (see postLoad).
func newPostLoadPlan(tables []workload.Table) *postLoadPlan {
	order := make([]*loadJob, len(tables))
	for i := range tables {
		order[i] = &loadJob{t: &tables[i]}
	}
	sortJobs(order)
	p := &postLoadPlan{fkBusy: map[string]bool{}}
	p.cond = sync.NewCond(&p.mu)
	for _, j := range order {
		ts := &tableSteps{t: j.t}
		for _, s := range j.t.PostLoad {
			if !isForeignKey(s) {
				ts.stmts = append(ts.stmts, s)
			}
		}
		ts.keys = len(ts.stmts)
		for _, s := range j.t.PostLoad {
			if isForeignKey(s) {
				ts.stmts = append(ts.stmts, s)
			}
		}
		if len(ts.stmts) > 0 {
			p.steps = append(p.steps, ts)
		}
	}
	return p
}

// tableSteps is one table's statements and how far they got.
type tableSteps struct {
	t         *workload.Table
	stmts     []string // its keys and indexes in order, then its foreign keys
	keys      int      // stmts[:keys] are not foreign keys
	next      int      // the first statement not started
	running   int      // started, not finished
	alone     bool     // the running statement is not an index build
	keysAdded int      // of stmts[:keys], finished
}

// postLoadPlan hands out the statements of postLoad as they may start.
type postLoadPlan struct {
	mu     sync.Mutex
	cond   *sync.Cond
	steps  []*tableSteps
	fkBusy map[string]bool // tables a running foreign key locks
	failed bool
}

// take waits for a statement that may start now; ok is false when none is
// left (or one failed).
func (p *postLoadPlan) take() (ts *tableSteps, stmt string, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		ts, stmt, left := p.next()
		if ts != nil {
			return ts, stmt, true
		}
		if p.failed || !left {
			return nil, "", false
		}
		p.cond.Wait() // a running statement ends (or fails) first
	}
}

// next starts (marks as running) a statement that may start now, if there
// is one; left reports statements not started. p.mu is held.
func (p *postLoadPlan) next() (ts *tableSteps, stmt string, left bool) {
	for _, ts := range p.steps {
		if ts.next == len(ts.stmts) {
			continue
		}
		left = true
		s := ts.stmts[ts.next]
		index := isIndexBuild(s)
		switch {
		case ts.next >= ts.keys:
			ref := referencedTable(s)
			if ts.running > 0 || !p.keysAdded(ref) || p.fkBusy[ts.t.Name] || p.fkBusy[ref] {
				continue
			}
			p.fkBusy[ts.t.Name], p.fkBusy[ref] = true, true
		case ts.running > 0 && (!index || ts.alone):
			continue
		}
		ts.next++
		ts.running++
		ts.alone = !index
		return ts, s, true
	}
	return nil, "", left
}

// keysAdded reports whether table name's statements other than foreign
// keys are done; for a name not among the tables ("": not recognised),
// whether every table's are.
func (p *postLoadPlan) keysAdded(name string) bool {
	all := true
	for _, ts := range p.steps {
		done := ts.keysAdded == ts.keys
		if ts.t.Name == name {
			return done
		}
		all = all && done
	}
	return all
}

// done records the end of statement s of ts.
func (p *postLoadPlan) done(ts *tableSteps, s string, err error) {
	p.mu.Lock()
	ts.running--
	if isForeignKey(s) {
		delete(p.fkBusy, ts.t.Name)
		delete(p.fkBusy, referencedTable(s))
	} else {
		ts.keysAdded++
	}
	if err != nil {
		p.failed = true
	}
	p.mu.Unlock()
	p.cond.Broadcast()
}

// referencedTable is the table a foreign key statement references, as
// written after REFERENCES ("" when there is none to read).
func referencedTable(s string) string {
	f := strings.Fields(s)
	for i := 0; i+1 < len(f); i++ {
		if strings.EqualFold(f[i], "references") {
			name, _, _ := strings.Cut(f[i+1], "(")
			return name
		}
	}
	return ""
}

// isIndexBuild reports a CREATE [UNIQUE] INDEX statement.
func isIndexBuild(s string) bool {
	f := strings.Fields(strings.ToLower(s))
	return len(f) >= 2 && f[0] == "create" && (f[1] == "index" || (len(f) >= 3 && f[1] == "unique" && f[2] == "index"))
}

// maintenanceBudget is the maintenance_work_mem (the memory of an index
// build's sort) the loader's sessions share while they build keys: each
// gets an equal part, at least 64 MB, and never less than the server's own
// setting. Index builds that fit sort in memory, and PostgreSQL's parallel
// index build needs 32 MB a participant. Kept modest because the server may
// be small and the target is not ours to tune: a larger server setting is
// never lowered.
const maintenanceBudget = 256 << 20

// raiseMaintenanceMem sets maintenance_work_mem on the loader's own
// sessions (conns) for the keys, and says what it set ("" when the
// server's setting is already as large).
func raiseMaintenanceMem(ctx context.Context, conns []*pgx.Conn) (string, error) {
	var kb int64 // pg_settings has it in kB
	if err := conns[0].QueryRow(ctx, "select setting::bigint from pg_settings where name = 'maintenance_work_mem'").Scan(&kb); err != nil {
		return "", fmt.Errorf("read maintenance_work_mem: %w", err)
	}
	want := max(int64(maintenanceBudget/len(conns)/1024), 64*1024)
	if want <= kb {
		return "", nil
	}
	for _, c := range conns {
		if err := execSQL(ctx, c, fmt.Sprintf("set maintenance_work_mem = '%dkB'", want)); err != nil {
			return "", fmt.Errorf("set maintenance_work_mem: %w", err)
		}
	}
	return fmt.Sprintf("%d MB on each of %d loader sessions (the server's setting: %d MB)", want/1024, len(conns), kb/1024), nil
}
