package importer

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
)

// Progress counts the bytes read from the source against its size, for the controller that
// shows a DataVolume's status.progress.
type Progress struct {
	read  atomic.Int64
	total atomic.Int64
	done  atomic.Bool
}

// ProgressReport is the JSON the progress endpoint serves.
type ProgressReport struct {
	// Progress is CDI's form: "47.16%", or "N/A" when the source's size is unknown.
	Progress string `json:"progress"`
	// Read is the number of source bytes read so far.
	Read int64 `json:"read"`
	// Total is the source's size in bytes (0: unknown).
	Total int64 `json:"total"`
}

// Report returns the current progress.
func (p *Progress) Report() ProgressReport {
	read, total := p.read.Load(), p.total.Load()
	r := ProgressReport{Read: read, Total: total, Progress: "N/A"}
	switch {
	case p.done.Load():
		r.Progress = "100.0%"
	case total > 0:
		pct := float64(read) * 100 / float64(total)
		if pct > 99.99 {
			pct = 99.99 // 100% only once the image is in place
		}
		r.Progress = fmt.Sprintf("%.2f%%", pct)
	}
	return r
}

// ServeHTTP answers GET /progress with the report as JSON.
func (p *Progress) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(p.Report())
}

// setTotal records the source's size (0: unknown).
func (p *Progress) setTotal(n int64) { p.total.Store(n) }

// finish marks the import complete.
func (p *Progress) finish() { p.done.Store(true) }

// reader counts what r reads.
func (p *Progress) reader(r io.Reader) io.Reader { return &countingReader{r: r, p: p} }

type countingReader struct {
	r io.Reader
	p *Progress
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.p.read.Add(int64(n))
	return n, err
}
