/*
Copyright The NativeVirt Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// secs formats a duration as seconds with one decimal.
func secs(d time.Duration) string { return fmt.Sprintf("%.1f", d.Seconds()) }

// formatTable is the Markdown table of the faults' results.
func formatTable(results []result) string {
	var b strings.Builder
	b.WriteString("| fault | writes sent | writes failed | API reads failed | API answered (s) | component answered (s) | converged (s) | held |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		api := "kept answering"
		switch {
		case r.probeFailed > 0 && r.apiBack < 0:
			api = "did not answer again"
		case r.probeFailed > 0:
			api = secs(r.apiBack)
		}
		held := "yes"
		if len(r.problems) > 0 {
			held = fmt.Sprintf("NO: %s", strings.Join(r.problems, "; "))
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %s | %s | %s | %s |\n", r.fault, r.sent, r.failed, r.probeFailed,
			api, secs(r.compBack), secs(r.converged), held)
	}
	return b.String()
}

// writeReport keeps a table under _output/faults of the checkout (the log has it too).
func writeReport(t *testing.T, name, text string) {
	t.Helper()
	dir := filepath.Join(cluster.Root(), "_output", "faults")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Log(err)
		return
	}
	host, _ := os.Hostname()
	head := fmt.Sprintf("%s on %s (%d CPUs)\n\n", time.Now().UTC().Format(time.RFC3339), host, runtime.NumCPU())
	if err := os.WriteFile(filepath.Join(dir, name), []byte(head+text), 0o644); err != nil {
		t.Log(err)
	}
}
