package convert

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestConvertClock(t *testing.T) {
	tz := kubevirtv1.ClockOffsetTimezone("America/New_York")
	empty := kubevirtv1.ClockOffsetTimezone("")
	tests := []struct {
		name    string
		clock   *kubevirtv1.Clock
		want    *Clock
		wantErr string
	}{
		{name: "unset: UTC", want: &Clock{Offset: "utc"}},
		{name: "UTC without offset", clock: &kubevirtv1.Clock{ClockOffset: kubevirtv1.ClockOffset{UTC: &kubevirtv1.ClockOffsetUTC{}}}, want: &Clock{Offset: "utc"}},
		{
			name:  "UTC with offset",
			clock: &kubevirtv1.Clock{ClockOffset: kubevirtv1.ClockOffset{UTC: &kubevirtv1.ClockOffsetUTC{OffsetSeconds: ptr(int32(7200))}}},
			want:  &Clock{Offset: "variable", Adjustment: "7200", Basis: "utc"},
		},
		{
			name:  "timezone",
			clock: &kubevirtv1.Clock{ClockOffset: kubevirtv1.ClockOffset{Timezone: &tz}},
			want:  &Clock{Offset: "timezone", Timezone: "America/New_York"},
		},
		{
			name: "timers",
			clock: &kubevirtv1.Clock{Timer: &kubevirtv1.Timer{
				RTC:  &kubevirtv1.RTCTimer{TickPolicy: "catchup", Track: "wall"},
				PIT:  &kubevirtv1.PITTimer{TickPolicy: "discard", Enabled: ptr(true)},
				HPET: &kubevirtv1.HPETTimer{Enabled: ptr(false)},
				KVM:  &kubevirtv1.KVMTimer{},
			}},
			want: &Clock{Offset: "utc", Timers: []Timer{
				{Name: "rtc", TickPolicy: "catchup", Track: "wall", Present: "yes"},
				{Name: "pit", TickPolicy: "discard", Present: "yes"},
				{Name: "hpet", Present: "no"},
				{Name: "kvmclock", Present: "yes"},
			}},
		},
		{
			name:    "both offsets",
			clock:   &kubevirtv1.Clock{ClockOffset: kubevirtv1.ClockOffset{UTC: &kubevirtv1.ClockOffsetUTC{}, Timezone: &tz}},
			wantErr: "at most one of utc and timezone",
		},
		{name: "empty timezone", clock: &kubevirtv1.Clock{ClockOffset: kubevirtv1.ClockOffset{Timezone: &empty}}, wantErr: "spec.domain.clock.timezone"},
		{
			name:    "bad RTC tick policy",
			clock:   &kubevirtv1.Clock{Timer: &kubevirtv1.Timer{RTC: &kubevirtv1.RTCTimer{TickPolicy: "merge"}}},
			wantErr: "spec.domain.clock.timer.rtc.tickPolicy",
		},
		{
			name:    "bad RTC track",
			clock:   &kubevirtv1.Clock{Timer: &kubevirtv1.Timer{RTC: &kubevirtv1.RTCTimer{Track: "moon"}}},
			wantErr: "spec.domain.clock.timer.rtc.track",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := convertClock(&kubevirtv1.DomainSpec{Clock: tc.clock}, field.NewPath("spec", "domain"))
			checkErrs(t, errs, tc.wantErr)
			if diff := cmp.Diff(tc.want, got); tc.wantErr == "" && diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
