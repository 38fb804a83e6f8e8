package replica

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/await"
	"github.com/pgarena/pgarena/internal/lazy"
	"github.com/pgarena/pgarena/internal/target"
)

// PostgreSQL 15.20 (and the other minors of that update) restricts which
// libraries logical decoding may load as output plugins to the setting
// output_plugin_libraries (default 'pgoutput, test_decoding'), for
// superusers too, when a slot is created and whenever it is read.
const pluginSetting = "output_plugin_libraries"

// outputPlugin is the output plugin a kind's subscriber decodes with on the
// primary ("" for a streaming standby).
func outputPlugin(kind string) string {
	switch kind {
	case "logical":
		return "pgoutput"
	case "pglogical":
		return "pglogical_output"
	}
	return ""
}

// PluginRefusedError is a primary refusing the output plugin a replica
// decodes with: the replica cannot follow until the setting changes.
type PluginRefusedError struct {
	Plugin string
	// Allowed is the primary's output_plugin_libraries ("" when unknown).
	Allowed string
	// Seen says where the refusal showed ("replication slot "s"", "the
	// primary's server log: ...").
	Seen string
	// Now is set when the refusal was logged just now (a replica is being
	// refused); a slot with a refused plugin may be anyone's, and stale.
	Now bool
}

func (e *PluginRefusedError) Error() string {
	now := ""
	if e.Allowed != "" {
		now = fmt.Sprintf(" (now '%s')", e.Allowed)
	}
	return fmt.Sprintf("the primary refuses logical decoding output plugin %s (%s): add %s to %s on the primary%s and reload its configuration",
		e.Plugin, e.Seen, e.Plugin, pluginSetting, now)
}

// allowedPlugins reads the server's output_plugin_libraries: has is false
// when the server has no such setting (every plugin may be loaded).
func allowedPlugins(ctx context.Context, conn *pgx.Conn) (list []string, raw string, has bool, err error) {
	err = conn.QueryRow(ctx, `select setting from pg_settings where name = $1`, pluginSetting).Scan(&raw)
	if err == pgx.ErrNoRows {
		return nil, "", false, nil
	}
	if err != nil {
		return nil, "", false, err
	}
	return splitList(raw), raw, true, nil
}

// splitList splits a list setting's value as the server does (names
// separated by commas, double quotes keep a name whole).
func splitList(raw string) []string {
	var out []string
	for _, f := range listItem.Get().FindAllString(raw, -1) {
		f = strings.TrimSpace(f)
		if strings.HasPrefix(f, `"`) {
			f = strings.ReplaceAll(strings.Trim(f, `"`), `""`, `"`)
		}
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// allowPlugin makes sure the primary lets a subscriber of kind decode
// with its output plugin. On a primary created for this run whose setting
// the user left alone (mayChange) it adds the plugin (ALTER SYSTEM and a
// reload) where the server has the setting; otherwise it names the
// setting to change.
func (p *Provider) allowPlugin(ctx context.Context, conn *pgx.Conn, mayChange bool) error {
	plugin := outputPlugin(p.Kind)
	if plugin == "" {
		return nil
	}
	list, raw, has, err := allowedPlugins(ctx, conn)
	if err != nil || !has || slices.Contains(list, plugin) {
		return err
	}
	want := append(list, plugin)
	if !mayChange {
		return fmt.Errorf("--replica %s needs output plugin %s allowed on the primary: add it to %s (now '%s'), e.g. --pg-set \"%s=%s\"",
			p.Kind, plugin, pluginSetting, raw, pluginSetting, strings.Join(want, ", "))
	}
	values := make([]string, len(want))
	for i, v := range want {
		values[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
	}
	if _, err := conn.Exec(ctx, "alter system set "+pluginSetting+" = "+strings.Join(values, ", ")); err != nil {
		return fmt.Errorf("--replica %s: allowing output plugin %s on the primary: %w", p.Kind, plugin, err)
	}
	if _, err := conn.Exec(ctx, "select pg_reload_conf()"); err != nil {
		return err
	}
	// The postmaster rereads its configuration asynchronously; new
	// sessions (the subscriber's walsender) see it once it has.
	cfg := conn.Config().Copy()
	err = await.Wait{What: "the primary to reload its configuration", Timeout: 30 * time.Second, Notef: p.Notef}.Poll(ctx, 50*time.Millisecond,
		func(ctx context.Context) (bool, string, error) {
			c, err := target.Connect(ctx, cfg, "pgarena-replica")
			if err != nil {
				return false, "", err
			}
			defer c.Close(context.Background())
			list, raw, _, err := allowedPlugins(ctx, c)
			return slices.Contains(list, plugin), fmt.Sprintf("%s is '%s'", pluginSetting, raw), err
		})
	if err != nil {
		return err
	}
	p.Notef("the primary allows output plugin %s for the %s replica (%s = '%s')", plugin, p.Kind, pluginSetting, strings.Join(want, ", "))
	return nil
}

// refusedPlugin looks on the primary for a refused output plugin: a
// logical replication slot whose plugin its output_plugin_libraries does
// not list, or the refusal in its server log (written since log's offset,
// when the log is readable). nil when none is seen.
func refusedPlugin(ctx context.Context, conn *pgx.Conn, log *logTail) (*PluginRefusedError, error) {
	list, raw, has, err := allowedPlugins(ctx, conn)
	if err != nil || !has {
		return nil, err
	}
	if log != nil {
		if m := log.find(refusalLine.Get()); m != nil {
			return &PluginRefusedError{Plugin: m[1], Allowed: raw, Seen: "the primary's server log: " + m[0], Now: true}, nil
		}
	}
	rows, err := conn.Query(ctx, `select slot_name, plugin from pg_replication_slots where slot_type = 'logical' order by slot_name`)
	if err != nil {
		return nil, err
	}
	var slot, plugin string
	var out *PluginRefusedError
	_, err = pgx.ForEachRow(rows, []any{&slot, &plugin}, func() error {
		if out == nil && !slices.Contains(list, plugin) {
			out = &PluginRefusedError{Plugin: plugin, Allowed: raw, Seen: fmt.Sprintf("its replication slot %q uses it", slot)}
		}
		return nil
	})
	return out, err
}

var listItem = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`"(?:[^"]|"")*"|[^,]+`) }}

// refusalLine is the server's message when it refuses an output plugin.
var refusalLine = lazy.Value[*regexp.Regexp]{New: buildRefusalLine}

func buildRefusalLine() *regexp.Regexp {
	return regexp.MustCompile(`library "([^"]+)" may not be used as an output plugin`)
}
