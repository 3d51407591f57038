package launcher

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

func TestClaimDisksFlag(t *testing.T) {
	disks := ClaimDisks{}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.Var(disks, "claim-disk", "")
	if err := fs.Parse([]string{"--claim-disk=data=1048576", "--claim-disk=logs=2097152"}); err != nil {
		t.Fatal(err)
	}
	if got := disks.String(); got != "data=1048576,logs=2097152" {
		t.Errorf("parsed %q", got)
	}
	for _, bad := range []string{"data", "=5", "data=-1", "data=x", "a/b=5", "data=0"} {
		if err := (ClaimDisks{}).Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}

func TestClaimImageSize(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		capacity, available, want int64
		wantErr                   bool
	}{
		{100 * mib, 200 * mib, 100 * mib, false},
		{100 * mib, 100 * mib, 100 * mib, false},
		{100 * mib, 95*mib + 123, 95 * mib, false},
		{100 * mib, 89 * mib, 0, true},
	}
	for _, tt := range tests {
		got, err := claimImageSize(tt.capacity, tt.available)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("claimImageSize(%d, %d) = %d, %v; want %d (error %v)", tt.capacity, tt.available, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestCreateClaimDisks(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"fresh", "used"} {
		if err := os.Mkdir(filepath.Join(dir, v), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	used := filepath.Join(dir, "used", ClaimDiskImage)
	if err := os.WriteFile(used, []byte("guest data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := createClaimDisks(dir, ClaimDisks{"fresh": 4 << 20, "used": 8 << 20}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, "fresh", ClaimDiskImage))
	if err != nil || st.Size() != 4<<20 {
		t.Errorf("fresh image: %v, size %d", err, st.Size())
	}
	if b, _ := os.ReadFile(used); string(b) != "guest data" {
		t.Errorf("an existing image was touched: %q", b)
	}
	if err := createClaimDisks(dir, ClaimDisks{"unmounted": 1 << 20}); err == nil {
		t.Error("a claim that is not mounted was accepted")
	}
}
