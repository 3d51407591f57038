package convert

import (
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// yesNo renders a tri-state (unset means yes) as libvirt's yes/no.
func yesNo(b *bool) string {
	if enabled(b) {
		return "yes"
	}
	return "no"
}

// convertClock gives the domain's <clock>: UTC (the default), UTC plus an
// offset, or a timezone, and the timers the guest configures.
func convertClock(spec *kubevirtv1.DomainSpec, p *field.Path) (*Clock, field.ErrorList) {
	c := spec.Clock
	if c == nil {
		return &Clock{Offset: "utc"}, nil
	}
	p = p.Child("clock")
	out := &Clock{Offset: "utc"}
	switch {
	case c.UTC != nil && c.Timezone != nil:
		return nil, field.ErrorList{field.Invalid(p, "utc and timezone", "set at most one of utc and timezone")}
	case c.UTC != nil && c.UTC.OffsetSeconds != nil && *c.UTC.OffsetSeconds != 0:
		out.Offset, out.Basis = "variable", "utc"
		out.Adjustment = strconv.Itoa(int(*c.UTC.OffsetSeconds))
	case c.Timezone != nil:
		if *c.Timezone == "" {
			return nil, field.ErrorList{field.Required(p.Child("timezone"), "a timezone name is needed")}
		}
		out.Offset, out.Timezone = "timezone", string(*c.Timezone)
	}
	if t := c.Timer; t != nil {
		errs := checkTimers(t, p.Child("timer"))
		if len(errs) > 0 {
			return nil, errs
		}
		if t.RTC != nil {
			out.Timers = append(out.Timers, Timer{Name: "rtc", TickPolicy: string(t.RTC.TickPolicy), Track: string(t.RTC.Track), Present: yesNo(t.RTC.Enabled)})
		}
		if t.PIT != nil {
			out.Timers = append(out.Timers, Timer{Name: "pit", TickPolicy: string(t.PIT.TickPolicy), Present: yesNo(t.PIT.Enabled)})
		}
		if t.HPET != nil {
			out.Timers = append(out.Timers, Timer{Name: "hpet", TickPolicy: string(t.HPET.TickPolicy), Present: yesNo(t.HPET.Enabled)})
		}
		if t.KVM != nil {
			out.Timers = append(out.Timers, Timer{Name: "kvmclock", Present: yesNo(t.KVM.Enabled)})
		}
		if t.Hyperv != nil {
			out.Timers = append(out.Timers, Timer{Name: "hypervclock", Present: yesNo(t.Hyperv.Enabled)})
		}
	}
	return out, nil
}

// checkTimers refuses tick policies and tracks libvirt does not know.
func checkTimers(t *kubevirtv1.Timer, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	check := func(fp *field.Path, value string, allowed ...string) {
		if value == "" {
			return
		}
		for _, a := range allowed {
			if value == a {
				return
			}
		}
		errs = append(errs, field.NotSupported(fp, value, allowed))
	}
	if t.RTC != nil {
		check(p.Child("rtc", "tickPolicy"), string(t.RTC.TickPolicy), "delay", "catchup")
		check(p.Child("rtc", "track"), string(t.RTC.Track), "guest", "wall")
	}
	if t.PIT != nil {
		check(p.Child("pit", "tickPolicy"), string(t.PIT.TickPolicy), "delay", "catchup", "discard")
	}
	if t.HPET != nil {
		check(p.Child("hpet", "tickPolicy"), string(t.HPET.TickPolicy), "delay", "catchup", "merge", "discard")
	}
	return errs
}
