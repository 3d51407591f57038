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

package e2e

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// kubectlTable is kubectl's column output (get, api-resources) split into cells.
type kubectlTable struct {
	// Header holds the column names in order.
	Header []string
	// Rows map column name to the cell's text ("" for an empty cell).
	Rows []map[string]string
}

// parseKubectlTable splits kubectl's column output by the header's column positions, so that an
// empty cell (a VM without STATUS) does not shift the cells after it.
func parseKubectlTable(out string) kubectlTable {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) == "" {
		return kubectlTable{}
	}
	head := lines[0]
	var tbl kubectlTable
	var starts []int
	for i := 0; i < len(head); {
		if head[i] == ' ' {
			i++
			continue
		}
		j := strings.IndexByte(head[i:], ' ')
		if j < 0 {
			j = len(head) - i
		}
		starts = append(starts, i)
		tbl.Header = append(tbl.Header, head[i:i+j])
		i += j
	}
	for _, line := range lines[1:] {
		row := map[string]string{}
		for k, name := range tbl.Header {
			from := starts[k]
			to := len(line)
			if k+1 < len(starts) && starts[k+1] < to {
				to = starts[k+1]
			}
			if from >= len(line) {
				row[name] = ""
				continue
			}
			row[name] = strings.TrimSpace(line[from:to])
		}
		tbl.Rows = append(tbl.Rows, row)
	}
	return tbl
}

func TestParseKubectlTable(t *testing.T) {
	tests := []struct {
		name string
		out  string
		want kubectlTable
	}{
		{
			name: "empty cell keeps the cells after it in place",
			out: "NAME        AGE   STATUS   READY\n" +
				"vm-cirros   3s             False\n" +
				"vm-other    1m    Running  True\n",
			want: kubectlTable{
				Header: []string{"NAME", "AGE", "STATUS", "READY"},
				Rows: []map[string]string{
					{"NAME": "vm-cirros", "AGE": "3s", "STATUS": "", "READY": "False"},
					{"NAME": "vm-other", "AGE": "1m", "STATUS": "Running", "READY": "True"},
				},
			},
		},
		{
			name: "short last line",
			out:  "NAME   SHORTNAMES   KIND\nfoo\n",
			want: kubectlTable{
				Header: []string{"NAME", "SHORTNAMES", "KIND"},
				Rows:   []map[string]string{{"NAME": "foo", "SHORTNAMES": "", "KIND": ""}},
			},
		},
		{
			name: "no output",
			out:  "",
			want: kubectlTable{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, parseKubectlTable(tc.out)); diff != "" {
				t.Errorf("parseKubectlTable (-want +got):\n%s", diff)
			}
		})
	}
}
