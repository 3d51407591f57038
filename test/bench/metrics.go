package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// WriteVerbs are the verbs of apiserver_request_total that change stored state.
var WriteVerbs = []string{"POST", "PUT", "PATCH", "APPLY", "DELETE"}

// Sample is one sample of a Prometheus text exposition.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// ParseMetrics parses the Prometheus text format (what /metrics serves): comments are skipped,
// timestamps ignored.
func ParseMetrics(text []byte) ([]Sample, error) {
	var out []Sample
	s := bufio.NewScanner(bytes.NewReader(text))
	s.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		smp, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("metrics line %d: %w", n, err)
		}
		out = append(out, smp)
	}
	return out, s.Err()
}

func parseSample(line string) (Sample, error) {
	smp := Sample{Labels: map[string]string{}}
	rest := line
	if i := strings.IndexAny(line, "{ "); i < 0 {
		return smp, fmt.Errorf("no value in %q", line)
	} else {
		smp.Name, rest = line[:i], line[i:]
	}
	if strings.HasPrefix(rest, "{") {
		rest = rest[1:]
		for {
			rest = strings.TrimLeft(rest, " ,")
			if strings.HasPrefix(rest, "}") {
				rest = rest[1:]
				break
			}
			eq := strings.Index(rest, `="`)
			if eq < 0 {
				return smp, fmt.Errorf("bad labels in %q", line)
			}
			key := rest[:eq]
			rest = rest[eq+2:]
			var val strings.Builder
			closed := false
			for i := 0; i < len(rest); i++ {
				c := rest[i]
				if c == '\\' && i+1 < len(rest) {
					i++
					switch rest[i] {
					case 'n':
						val.WriteByte('\n')
					default:
						val.WriteByte(rest[i])
					}
					continue
				}
				if c == '"' {
					rest = rest[i+1:]
					closed = true
					break
				}
				val.WriteByte(c)
			}
			if !closed {
				return smp, fmt.Errorf("unterminated label value in %q", line)
			}
			smp.Labels[key] = val.String()
		}
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return smp, fmt.Errorf("no value in %q", line)
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return smp, fmt.Errorf("value of %q: %w", line, err)
	}
	smp.Value = v
	return smp, nil
}

// SumBy sums the samples named name whose labels include every pair of match, grouped by the
// value of label by.
func SumBy(samples []Sample, name string, match map[string]string, by string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range samples {
		if s.Name != name {
			continue
		}
		ok := true
		for k, v := range match {
			if s.Labels[k] != v {
				ok = false
				break
			}
		}
		if ok {
			out[s.Labels[by]] += s.Value
		}
	}
	return out
}

// WritesByResource counts the write requests of apiserver_request_total per resource (with
// "/<subresource>" when there is one) of group.
func WritesByResource(samples []Sample, group string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range samples {
		if s.Name != "apiserver_request_total" || s.Labels["group"] != group {
			continue
		}
		write := false
		for _, v := range WriteVerbs {
			if s.Labels["verb"] == v {
				write = true
			}
		}
		if !write {
			continue
		}
		r := s.Labels["resource"]
		if sub := s.Labels["subresource"]; sub != "" {
			r += "/" + sub
		}
		out[r] += s.Value
	}
	return out
}

// Delta is after - before per key (keys of either).
func Delta(before, after map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		out[k] = v - before[k]
	}
	for k, v := range before {
		if _, ok := after[k]; !ok {
			out[k] = -v
		}
	}
	return out
}
