package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChunk(t *testing.T) {
	s := []int{0, 1, 2, 3, 4, 5, 6}
	tests := []struct {
		rounds int
		want   [][]int
	}{
		{1, [][]int{{0, 1, 2, 3, 4, 5, 6}}},
		{2, [][]int{{0, 1, 2}, {3, 4, 5, 6}}},
		{3, [][]int{{0, 1}, {2, 3}, {4, 5, 6}}},
		{7, [][]int{{0}, {1}, {2}, {3}, {4}, {5}, {6}}},
	}
	for _, tc := range tests {
		var got [][]int
		for r := 0; r < tc.rounds; r++ {
			got = append(got, chunk(s, r, tc.rounds))
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%d rounds (-want +got):\n%s", tc.rounds, diff)
		}
	}
}

func TestFillAPITable(t *testing.T) {
	targets := []Target{{Name: Aggregated}, {Name: Direct}, {Name: CRD}}
	rec := func(target, op string, clients int, ops float64) APIRecord {
		return APIRecord{Target: target, Op: op, Clients: clients, Dist: Dist{OpsPerSec: ops, P50Ms: 2, P99Ms: 10}}
	}
	records := []APIRecord{
		rec("a", "create", 1, 120), rec("b", "create", 1, 300), rec("c", "create", 1, 100),
		rec("a", "get", 1, 90), rec("b", "get", 1, 150), rec("c", "get", 1, 100),
		// list and watch missing for (c): no ratios, no checks
		rec("a", "list", 1, 10), rec("b", "list", 1, 20),
	}
	res := &Result{}
	fillAPITable(res, records, targets, []int{1})
	wantRows := [][]string{
		{"create", "1", "120", "2.00", "10.0", "300", "2.00", "10.0", "100", "2.00", "10.0", "1.20×", "3.00×"},
		{"get", "1", "90.0", "2.00", "10.0", "150", "2.00", "10.0", "100", "2.00", "10.0", "0.90×", "1.50×"},
		{"list", "1", "10.0", "2.00", "10.0", "20.0", "2.00", "10.0", "-", "-", "-", "-", "-"},
		{"watch", "1", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-"},
	}
	if diff := cmp.Diff(wantRows, res.Rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	var verdicts []string
	for _, c := range res.Targets {
		verdicts = append(verdicts, c.Name+": "+c.Verdict())
	}
	wantVerdicts := []string{
		"create, 1 clients: (a)/(c) ops/s: met",
		"create, 1 clients: (b)/(c) ops/s: met",
		"get, 1 clients: (a)/(c) ops/s: MISSED",
		"get, 1 clients: (b)/(c) ops/s: MISSED",
	}
	if diff := cmp.Diff(wantVerdicts, verdicts); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
}
