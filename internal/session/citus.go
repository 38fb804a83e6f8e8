package session

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtext"
	"github.com/pgarena/pgarena/internal/sampler"
	"github.com/pgarena/pgarena/internal/store"
	"github.com/pgarena/pgarena/internal/workload"
)

// DescribeCitus reads a Citus coordinator's topology for the run record
// (server.json) and init: version, primary nodes, the distribution of
// tables (those named, all when none are) and their placements per node,
// and the distributed functions. Nil without the citus extension.
func DescribeCitus(ctx context.Context, conn pgtext.Querier, tables []string) (*store.CitusInfo, error) {
	var has bool
	if err := conn.QueryRow(ctx, "select exists (select 1 from pg_extension where extname = 'citus')").Scan(&has); err != nil || !has {
		return nil, err
	}
	c := &store.CitusInfo{}
	if err := conn.QueryRow(ctx, "select citus_version()").Scan(&c.Version); err != nil {
		return nil, fmt.Errorf("citus: version: %w", err)
	}
	nodes, coordinator, err := citusNodes(ctx, conn, c)
	if err != nil {
		return nil, err
	}
	all := len(tables) == 0
	if err := citusTables(ctx, conn, c, all, tables); err != nil {
		return nil, err
	}
	if err := citusPlacements(ctx, conn, nodes, all, tables); err != nil {
		return nil, err
	}
	if coordinator != nil && coordinator.Shards > 0 {
		c.Coordinator = coordinator
	}
	if err := citusFunctions(ctx, conn, c); err != nil {
		return nil, err
	}
	return c, nil
}

// citusNode is a node's address.
type citusNode struct {
	host string
	port int
}

// citusNodes reads the primary nodes into c.Workers and returns every
// node by address, the coordinator too (nil if it is not in pg_dist_node).
func citusNodes(ctx context.Context, conn pgtext.Querier, c *store.CitusInfo) (map[citusNode]*store.CitusNode, *store.CitusNode, error) {
	rows, err := conn.Query(ctx, "select nodename, nodeport, isactive, groupid = 0 from pg_dist_node where noderole = 'primary' order by groupid, nodeid")
	if err != nil {
		return nil, nil, fmt.Errorf("citus: nodes: %w", err)
	}
	nodes := map[citusNode]*store.CitusNode{}
	var coordinator *store.CitusNode
	for rows.Next() {
		var n store.CitusNode
		var coord bool
		if err := rows.Scan(&n.Host, &n.Port, &n.Active, &coord); err != nil {
			return nil, nil, err
		}
		if coord {
			coordinator = &n
			nodes[citusNode{n.Host, n.Port}] = coordinator
		} else {
			c.Workers = append(c.Workers, n)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("citus: nodes: %w", err)
	}
	for i := range c.Workers {
		nodes[citusNode{c.Workers[i].Host, c.Workers[i].Port}] = &c.Workers[i]
	}
	return nodes, coordinator, nil
}

// citusTables reads the distribution of the tables named (all when all).
func citusTables(ctx context.Context, conn pgtext.Querier, c *store.CitusInfo, all bool, tables []string) error {
	rows, err := conn.Query(ctx, `select table_name::text, citus_table_type, distribution_column, colocation_id, shard_count
		from citus_tables where $1 or table_name::text = any($2) order by colocation_id, table_name::text`, all, tables)
	if err != nil {
		return fmt.Errorf("citus: tables: %w", err)
	}
	for rows.Next() {
		var t store.CitusTable
		if err := rows.Scan(&t.Name, &t.Type, &t.Column, &t.Colocation, &t.Shards); err != nil {
			return err
		}
		if t.Column == "<none>" {
			t.Column = ""
		}
		c.Tables = append(c.Tables, t)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("citus: tables: %w", err)
	}
	return nil
}

// citusPlacements counts the distributed tables' shards and bytes per node.
func citusPlacements(ctx context.Context, conn pgtext.Querier, nodes map[citusNode]*store.CitusNode, all bool, tables []string) error {
	rows, err := conn.Query(ctx, `select nodename, nodeport, count(*), coalesce(sum(shard_size), 0)::bigint
		from citus_shards where citus_table_type = 'distributed' and ($1 or table_name::text = any($2)) group by 1, 2`, all, tables)
	if err != nil {
		return fmt.Errorf("citus: placements: %w", err)
	}
	for rows.Next() {
		var host string
		var port, shards int
		var bytes int64
		if err := rows.Scan(&host, &port, &shards, &bytes); err != nil {
			return err
		}
		if n := nodes[citusNode{host, port}]; n != nil {
			n.Shards, n.Bytes = shards, bytes
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("citus: placements: %w", err)
	}
	return nil
}

// citusFunctions reads the distributed functions.
func citusFunctions(ctx context.Context, conn pgtext.Querier, c *store.CitusInfo) error {
	rows, err := conn.Query(ctx, `select p.oid::regprocedure::text, d.distribution_argument_index + 1, coalesce(d.colocationid, 0)
		from pg_dist_object d join pg_proc p on d.classid = 'pg_proc'::regclass and d.objid = p.oid
		where d.distribution_argument_index is not null order by 1`)
	if err != nil {
		return fmt.Errorf("citus: functions: %w", err)
	}
	for rows.Next() {
		var f store.CitusFunction
		if err := rows.Scan(&f.Signature, &f.Arg, &f.Colocation); err != nil {
			return err
		}
		c.Functions = append(c.Functions, f)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("citus: functions: %w", err)
	}
	return nil
}

// tableNames are the names of the tables of ws.
func tableNames(ws []workload.Workload) []string {
	var out []string
	for _, w := range ws {
		for _, t := range w.Tables() {
			out = append(out, t.Name)
		}
	}
	return out
}

// citusWorkers are the workers to sample: those given (--worker-dsn), or
// the active workers of c reached with cfg's credentials and database at
// each node's address (nil without Citus).
func citusWorkers(given []*pgx.ConnConfig, c *store.CitusInfo, cfg *pgx.ConnConfig) []sampler.CitusWorker {
	if len(given) > 0 {
		var out []sampler.CitusWorker
		for _, g := range given {
			out = append(out, sampler.CitusWorker{Name: fmt.Sprintf("%s:%d", g.Host, g.Port), Config: g})
		}
		return out
	}
	if c == nil || cfg == nil {
		return nil
	}
	var out []sampler.CitusWorker
	for _, w := range c.Workers {
		if !w.Active {
			continue
		}
		wc := cfg.Copy()
		wc.Host, wc.Port, wc.Fallbacks = w.Host, uint16(w.Port), nil
		if wc.TLSConfig != nil {
			wc.TLSConfig.ServerName = w.Host
		}
		out = append(out, sampler.CitusWorker{Name: fmt.Sprintf("%s:%d", w.Host, w.Port), Config: wc})
	}
	return out
}
