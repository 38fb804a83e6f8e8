package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/pgarena/pgarena/internal/report"
	"github.com/pgarena/pgarena/internal/store"
)

func (a *app) reportCommand() *cobra.Command {
	var (
		sel    runSelection
		out    string
		pngDir string
	)
	cmd := &cobra.Command{
		Use:   "report [RUN...]",
		Short: "Write a self-contained HTML report (and PNG charts) of one run or several",
		Long: `Write one self-contained HTML file (styles, scripts and data inline: it opens
without network, on a laptop or a phone): headline figures, throughput,
latency percentiles per transaction type, errors by class and connected
clients over time, a table per transaction type and the environment. With
several runs the series are overlaid and a comparison table is added.
--png also writes the charts as PNG files sized for a blog post.

Without runs it reports the last one. ` + selectionHelp,
		Example: "  pgarena report last -o run.html\n  pgarena report RUN_A RUN_B RUN_C -o cmp.html\n  pgarena report last --png charts/",
		RunE: func(cmd *cobra.Command, args []string) error {
			defer sel.close()
			runs, err := sel.load(a, args, []string{"last"})
			if err != nil {
				return err
			}
			if out == "-" {
				return report.HTML(a.Stdout, runs)
			}
			if pngDir == "" || cmd.Flags().Changed("output") {
				if err := writeReport(out, runs); err != nil {
					return err
				}
				fmt.Fprintf(a.Stderr, "report of %d run(s) written to %s\n", len(runs), out)
			}
			if pngDir != "" {
				charts, err := report.PNGs(runs)
				if err != nil {
					return err
				}
				if err := os.MkdirAll(pngDir, 0o755); err != nil {
					return fmt.Errorf("--png: %w", err)
				}
				for _, c := range charts {
					path := filepath.Join(pngDir, c.Name)
					if err := os.WriteFile(path, c.Data, 0o644); err != nil {
						return fmt.Errorf("--png: %w", err)
					}
					fmt.Fprintf(a.Stderr, "chart written to %s\n", path)
				}
			}
			return nil
		},
	}
	sel.addFlags(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "pgarena-report.html", "HTML file to write (- for standard output)")
	cmd.Flags().StringVar(&pngDir, "png", "", "also write the charts as PNG files into this directory (alone: only the PNG files)")
	return cmd
}

// writeReport writes the HTML report to path through a temporary file, so
// that a failed report never leaves a half-written file behind.
func writeReport(path string, runs []*store.Run) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".pgarena-report-*.html")
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err = report.HTML(bw, runs); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err = errors.Join(bw.Flush(), f.Chmod(0o644), f.Close()); err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}
