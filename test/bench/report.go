package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
)

// Result is the outcome of one suite: a table for people and records for machines. It is
// printed by Print and written as <dir>/<Suite>.json by Write.
type Result struct {
	// Suite names the suite and its JSON file (api-path, scale, control-plane, console).
	Suite string `json:"suite"`
	// Title heads the printed table.
	Title string `json:"title"`
	// Machine is where it ran.
	Machine Machine `json:"machine"`
	// Started and Seconds bound the suite's run.
	Started time.Time `json:"started"`
	Seconds float64   `json:"seconds"`
	// Quick is true for BENCH_QUICK=1 runs (smaller counts).
	Quick bool `json:"quick"`
	// LoadBefore and LoadAfter are the 1-minute load averages around the suite: a load well
	// above what the suite itself causes means other work shared the CPUs.
	LoadBefore float64 `json:"loadBefore"`
	LoadAfter  float64 `json:"loadAfter"`
	// Setup describes what was measured (targets, object size, counts).
	Setup map[string]string `json:"setup,omitempty"`
	// Columns and Rows are the printed table.
	Columns []string   `json:"columns"`
	Rows    [][]string `json:"rows"`
	// Records hold the raw measurements behind the table.
	Records any `json:"records,omitempty"`
	// Targets are the goals and whether this run met them.
	Targets []Check `json:"targets,omitempty"`
	// Notes explain skips and caveats.
	Notes []string `json:"notes,omitempty"`
}

// Check is one target of the issue compared with a measured figure.
type Check struct {
	// Name says what is compared, Goal the target ("≥ 2.0× (c)").
	Name string `json:"name"`
	Goal string `json:"goal"`
	// Measured is the figure of this run.
	Measured string `json:"measured"`
	// Met is nil when the figure could not be measured (skipped).
	Met *bool `json:"met"`
}

// Verdict is "met", "MISSED" or "not measured".
func (c Check) Verdict() string {
	switch {
	case c.Met == nil:
		return "not measured"
	case *c.Met:
		return "met"
	default:
		return "MISSED"
	}
}

// NewCheck builds a Check from a measured condition.
func NewCheck(name, goal, measured string, met bool) Check {
	return Check{Name: name, Goal: goal, Measured: measured, Met: &met}
}

// Skipped builds a Check that could not be measured, with the reason as the figure.
func Skipped(name, goal, reason string) Check {
	return Check{Name: name, Goal: goal, Measured: reason}
}

// AddRow appends one table row.
func (r *Result) AddRow(cells ...string) { r.Rows = append(r.Rows, cells) }

// Note appends a note.
func (r *Result) Note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// Print writes the table, the targets and the notes as aligned text.
func (r *Result) Print(w io.Writer) {
	fmt.Fprintf(w, "\n== %s (%s, %.0f s, load %.1f → %.1f)\n", r.Title, r.Suite, r.Seconds, r.LoadBefore, r.LoadAfter)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight|tabwriter.Debug)
	fmt.Fprintln(tw, strings.Join(r.Columns, "\t")+"\t")
	for _, row := range r.Rows {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	_ = tw.Flush()
	for _, c := range r.Targets {
		fmt.Fprintf(w, "  target %-44s %-14s measured %-24s %s\n", c.Name, c.Goal, c.Measured, c.Verdict())
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

// Markdown renders the table, targets and notes for docs/performance.md.
func (r *Result) Markdown(w io.Writer) {
	fmt.Fprintf(w, "### %s\n\n", r.Title)
	fmt.Fprintf(w, "| %s |\n", strings.Join(r.Columns, " | "))
	fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(r.Columns)))
	for _, row := range r.Rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	if len(r.Targets) > 0 {
		fmt.Fprintf(w, "\n| target | goal | measured | verdict |\n|---|---|---|---|\n")
		for _, c := range r.Targets {
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", c.Name, c.Goal, c.Measured, c.Verdict())
		}
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range r.Notes {
			fmt.Fprintf(w, "- %s\n", n)
		}
	}
	fmt.Fprintf(w, "\n(%s: %.0f s, load average %.1f before, %.1f after)\n\n", r.Suite, r.Seconds, r.LoadBefore, r.LoadAfter)
}

// Write stores the result as dir/<Suite>.json.
func (r *Result) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, r.Suite+".json"), append(b, '\n'), 0o644)
}

// Formatting helpers for table cells.

// FmtOps formats a throughput.
func FmtOps(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.1f", v)
	}
}

// FmtMs formats milliseconds.
func FmtMs(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// FmtRatio formats a ratio as "1.23×", or "-" when there is none.
func FmtRatio(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", v)
}

// FmtMiB formats a byte count in MiB.
func FmtMiB(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// FmtSeconds formats a duration in seconds.
func FmtSeconds(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }
