package bench

import (
	"fmt"
	"slices"
	"strings"
)

// CallsByVerbResource counts the requests of apiserver_request_total of group per "VERB
// resource[/subresource]" (WATCH and CONNECT left out: long-running, counted when they start).
func CallsByVerbResource(samples []Sample, group string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range samples {
		if s.Name != "apiserver_request_total" || s.Labels["group"] != group {
			continue
		}
		verb := s.Labels["verb"]
		if verb == "WATCH" || verb == "CONNECT" {
			continue
		}
		r := s.Labels["resource"]
		if sub := s.Labels["subresource"]; sub != "" {
			r += "/" + sub
		}
		out[verb+" "+r] += s.Value
	}
	return out
}

// WritesTo sums the write calls (WriteVerbs) of calls, keyed as CallsByVerbResource keys them,
// to the resources (with any subresource) in resources.
func WritesTo(calls map[string]float64, resources ...string) float64 {
	total := 0.0
	for k, v := range calls {
		verb, r, _ := strings.Cut(k, " ")
		base, _, _ := strings.Cut(r, "/")
		if slices.Contains(WriteVerbs, verb) && slices.Contains(resources, base) {
			total += v
		}
	}
	return total
}

// FmtCalls renders calls divided by per, largest first, as "PUT virtualmachineinstances/status
// 2.0, ...", leaving out what rounds to 0.0.
func FmtCalls(calls map[string]float64, per float64) string {
	keys := make([]string, 0, len(calls))
	for k, v := range calls {
		if v/per >= 0.05 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int {
		if calls[a] != calls[b] {
			if calls[a] > calls[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %.1f", k, calls[k]/per)
	}
	return strings.Join(parts, ", ")
}
