package loader

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtext"
	"github.com/pgarena/pgarena/internal/workload"
)

// markPrefix starts the comment pgarena puts on every table it creates;
// a table whose comment starts with it is pgarena's to drop.
const markPrefix = "pgarena:"

// ForeignTablesError is returned by Init when tables (or functions) of the
// workload exist that pgarena did not create for it (they lack its mark, or
// carry the mark of another workload: tpch, tpcc and chbench share table
// names) and Options.Force is not set. Nothing was changed.
type ForeignTablesError struct {
	Tables []string
	// Owners names, for those of Tables that pgarena made for another
	// workload, that workload.
	Owners map[string]string
}

// List is the tables, each made for another workload followed by its name:
// "orders (tpcc's), nation".
func (e *ForeignTablesError) List() string {
	out := make([]string, len(e.Tables))
	for i, t := range e.Tables {
		out[i] = t
		if o := e.Owners[t]; o != "" {
			out[i] += " (" + o + "'s)"
		}
	}
	return strings.Join(out, ", ")
}

func (e *ForeignTablesError) Error() string {
	tables, fns := 0, 0
	for _, t := range e.Tables {
		if strings.Contains(t, "(") {
			fns++
		} else {
			tables++
		}
	}
	what := "tables"
	switch {
	case tables == 0:
		what = "functions"
	case fns > 0:
		what = "tables and functions"
	}
	if len(e.Owners) > 0 {
		return "refusing to replace " + what + " pgarena did not create for this workload: " + e.List() +
			" (use another database, or pass --force to replace them)"
	}
	return "refusing to replace " + what + " pgarena did not create: " + e.List() +
		" (pass --force to replace them)"
}

// relation is the state of one table (or partition) of a workload.
type relation struct {
	name   string
	top    string // the workload table it belongs to
	exists bool
	marked bool   // by pgarena for this workload
	owner  string // the workload whose mark it carries, if pgarena's
}

// markOwner is the workload named by a pgarena mark ("pgarena:tpcc created
// by ..." is tpcc's), or "" for a comment that is not one.
func markOwner(comment string) string {
	rest, ok := strings.CutPrefix(comment, markPrefix)
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, " ")
	return name
}

// foreignError is the ForeignTablesError of rels (tables, then functions),
// or nil when none is foreign.
func foreignError(rels ...[]relation) *ForeignTablesError {
	var e ForeignTablesError
	for _, rs := range rels {
		for _, r := range rs {
			if r.exists && !r.marked {
				e.Tables = append(e.Tables, r.name)
				if r.owner != "" {
					if e.Owners == nil {
						e.Owners = map[string]string{}
					}
					e.Owners[r.name] = r.owner
				}
			}
		}
	}
	if len(e.Tables) == 0 {
		return nil
	}
	return &e
}

// relations lists the tables of w (each Table's Name and Children) and any
// other existing partitions of them, with whether each exists and carries
// pgarena's mark.
func relations(ctx context.Context, conn pgtext.Querier, w workload.Workload) ([]relation, error) {
	var names, tops []string
	for _, t := range w.Tables() {
		names = append(names, t.Name)
		tops = append(tops, t.Name)
		for _, c := range t.Children {
			names = append(names, c)
			tops = append(tops, t.Name)
		}
	}
	// Listed names first, in order, then partitions found in the
	// database that the workload does not list (someone attached them).
	rows, err := conn.Query(ctx, `
		select u.n, u.top, c.oid is not null, coalesce(obj_description(c.oid, 'pg_class'), ''), u.i, 0
		from unnest($1::text[], $2::text[]) with ordinality u(n, top, i)
		left join pg_class c on c.oid = to_regclass(u.n)
		union all
		select t.relid::regclass::text, u.n, true, coalesce(obj_description(t.relid, 'pg_class'), ''), u.i, t.level
		from unnest($1::text[]) with ordinality u(n, i), pg_partition_tree(to_regclass(u.n)) t
		where t.level > 0 and not t.relid::regclass::text = any($1::text[])
		order by 5, 6, 1`, names, tops)
	if err != nil {
		return nil, fmt.Errorf("look up tables: %w", err)
	}
	var out []relation
	seen := map[string]bool{}
	for rows.Next() {
		var r relation
		var i int64
		var level int32
		var comment string
		if err := rows.Scan(&r.name, &r.top, &r.exists, &comment, &i, &level); err != nil {
			rows.Close()
			return nil, fmt.Errorf("look up tables: %w", err)
		}
		r.owner = markOwner(comment)
		r.marked = r.owner == w.Meta().Name
		if !seen[r.name] {
			seen[r.name] = true
			out = append(out, r)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("look up tables: %w", err)
	}
	return out, nil
}

// Missing returns the tables of w (including listed partitions) that do
// not exist, in the workload's order.
func Missing(ctx context.Context, conn pgtext.Querier, w workload.Workload) ([]string, error) {
	rels, err := relations(ctx, conn, w)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range rels {
		if !r.exists {
			out = append(out, r.name)
		}
	}
	return out, nil
}

// Foreign returns the tables of w, and partitions of them, that exist
// without pgarena's mark for w (pgarena did not create them, or made them
// for another workload), as the error Init would return, or nil if there
// are none. Drop leaves them alone and Init replaces them only when forced.
// Functions of a workload.Functioner count too.
func Foreign(ctx context.Context, conn *pgx.Conn, w workload.Workload) (*ForeignTablesError, error) {
	rels, err := relations(ctx, conn, w)
	if err != nil {
		return nil, err
	}
	fns, err := functions(ctx, conn, w)
	if err != nil {
		return nil, err
	}
	return foreignError(rels, fns), nil
}

// functions returns the state of the functions of w, if it is a
// workload.Functioner.
func functions(ctx context.Context, conn *pgx.Conn, w workload.Workload) ([]relation, error) {
	f, ok := w.(workload.Functioner)
	if !ok {
		return nil, nil
	}
	var sigs []string
	for _, fn := range f.Functions() {
		sigs = append(sigs, fn.Signature)
	}
	rows, err := conn.Query(ctx, `
		select u.s, p is not null, coalesce(obj_description(p, 'pg_proc'), '')
		from unnest($1::text[]) with ordinality u(s, i), to_regprocedure(u.s) p
		order by u.i`, sigs)
	if err != nil {
		return nil, fmt.Errorf("look up functions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (relation, error) {
		var rel relation
		var comment string
		err := r.Scan(&rel.name, &rel.exists, &comment)
		rel.top = rel.name
		rel.owner = markOwner(comment)
		rel.marked = rel.owner == w.Meta().Name
		return rel, err
	})
	if err != nil {
		return nil, fmt.Errorf("look up functions: %w", err)
	}
	return out, nil
}

// markFunctions marks the functions of w, once PostLoad created them.
func markFunctions(ctx context.Context, conn *pgx.Conn, w workload.Workload) error {
	fns, err := functions(ctx, conn, w)
	if err != nil {
		return err
	}
	for _, f := range fns {
		if !f.exists {
			return fmt.Errorf("function %s was not created", f.name)
		}
		stmt := fmt.Sprintf("comment on routine %s is '%s%s created by pgarena init; pgarena may drop it'",
			f.name, markPrefix, strings.ReplaceAll(w.Meta().Name, "'", "''"))
		if err := execSQL(ctx, conn, stmt); err != nil {
			return fmt.Errorf("mark %s: %w", f.name, err)
		}
	}
	return nil
}

// CreateFunctions creates the functions of w (see
// workload.Functioner) on a database already loaded, without
// touching its tables: each missing or pgarena-marked one is created (or
// replaced) and marked; a same-named one pgarena did not create is left
// alone and returned in kept.
func CreateFunctions(ctx context.Context, conn *pgx.Conn, w workload.Workload) (created, kept []string, err error) {
	fi, ok := w.(workload.Functioner)
	if !ok {
		return nil, nil, nil
	}
	fns, err := functions(ctx, conn, w)
	if err != nil {
		return nil, nil, err
	}
	ddl := map[string]string{}
	for _, fn := range fi.Functions() {
		ddl[fn.Signature] = fn.Create
	}
	for _, f := range fns {
		if f.exists && !f.marked {
			kept = append(kept, f.name)
			continue
		}
		if err := execSQL(ctx, conn, ddl[f.name]); err != nil {
			return created, kept, fmt.Errorf("create %s: %w", f.name, err)
		}
		stmt := fmt.Sprintf("comment on routine %s is '%s%s created by pgarena init; pgarena may drop it'",
			f.name, markPrefix, strings.ReplaceAll(w.Meta().Name, "'", "''"))
		if err := execSQL(ctx, conn, stmt); err != nil {
			return created, kept, fmt.Errorf("mark %s: %w", f.name, err)
		}
		created = append(created, f.name)
	}
	return created, kept, nil
}

// Drop drops the tables (and functions, see workload.Functioner) of w that
// carry pgarena's mark and returns their names (partitions included). Tables without the mark are left alone, and
// so is a marked table with an unmarked partition, which dropping it would
// take along. It never cascades to other objects: a view on a table makes
// Drop fail.
func Drop(ctx context.Context, conn *pgx.Conn, w workload.Workload) (dropped []string, err error) {
	rels, err := relations(ctx, conn, w)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{} // workload tables holding a foreign partition
	for _, r := range rels {
		if r.exists && !r.marked {
			keep[r.top] = true
		}
	}
	for _, r := range rels {
		if r.exists && r.marked && !(r.name == r.top && keep[r.top]) {
			dropped = append(dropped, r.name)
		}
	}
	if len(dropped) > 0 {
		if err := execSQL(ctx, conn, dropStatement(dropped)); err != nil {
			return nil, fmt.Errorf("drop %s: %w", strings.Join(dropped, ", "), err)
		}
	}
	fns, err := functions(ctx, conn, w)
	if err != nil {
		return dropped, err
	}
	for _, f := range fns {
		if f.exists && f.marked {
			if err := execSQL(ctx, conn, "drop routine "+f.name); err != nil {
				return dropped, fmt.Errorf("drop function %s: %w", f.name, err)
			}
			dropped = append(dropped, f.name)
		}
	}
	return dropped, nil
}

// dropStatement drops tables in one statement, so partitions listed with
// their parent are no error.
func dropStatement(names []string) string {
	return "drop table if exists " + strings.Join(names, ", ")
}

// markStatement marks a table as created by pgarena for workload.
func markStatement(table, workload string) string {
	return fmt.Sprintf("comment on table %s is %s", table, quoteLiteral(markComment(workload)))
}

// markComment is the mark of a table of workload.
func markComment(workload string) string {
	return markPrefix + workload + " created by pgarena init; pgarena may drop it"
}

// execSQL runs one statement over the simple protocol, whatever the
// connection's default mode (VACUUM and COPY ... FREEZE care about
// transaction blocks).
func execSQL(ctx context.Context, conn *pgx.Conn, sql string) error {
	return conn.PgConn().Exec(ctx, sql).Close()
}
