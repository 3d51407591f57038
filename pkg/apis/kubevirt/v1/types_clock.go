package v1

// Clock is a guest's clock: its offset from UTC and its timers.
type Clock struct {
	// ClockOffset sets the guest's clock offset: utc or timezone.
	ClockOffset `json:",inline"`
	// Timer configures the guest's timers.
	// +optional
	Timer *Timer `json:"timer,omitempty"`
}

// ClockOffset is the start value of a guest's clock; at most one member is set.
type ClockOffset struct {
	// UTC starts the clock at UTC plus an offset.
	// +optional
	UTC *ClockOffsetUTC `json:"utc,omitempty"`
	// Timezone starts the clock at the local time of a timezone, e.g. "Europe/Berlin".
	// +optional
	Timezone *ClockOffsetTimezone `json:"timezone,omitempty"`
}

// ClockOffsetUTC starts a guest clock at UTC plus an offset.
type ClockOffsetUTC struct {
	// OffsetSeconds is added to UTC when the guest starts.
	// +optional
	OffsetSeconds *int32 `json:"offsetSeconds,omitempty"`
}

// ClockOffsetTimezone is a timezone name from the tz database.
type ClockOffsetTimezone string

// Timer configures the timers of a guest.
type Timer struct {
	// HPET is the High Precision Event Timer.
	// +optional
	HPET *HPETTimer `json:"hpet,omitempty"`
	// KVM is the KVM paravirtual clock.
	// +optional
	KVM *KVMTimer `json:"kvm,omitempty"`
	// PIT is the Programmable Interval Timer.
	// +optional
	PIT *PITTimer `json:"pit,omitempty"`
	// RTC is the Real Time Clock.
	// +optional
	RTC *RTCTimer `json:"rtc,omitempty"`
	// Hyperv is the Hyper-V reference time counter.
	// +optional
	Hyperv *HypervTimer `json:"hyperv,omitempty"`
}

// HPETTickPolicy says what happens to missed HPET ticks.
type HPETTickPolicy string

// PITTickPolicy says what happens to missed PIT ticks.
type PITTickPolicy string

// RTCTickPolicy says what happens to missed RTC ticks.
type RTCTickPolicy string

// Tick policies.
const (
	// HPETTickPolicyDelay delivers missed ticks late, at the normal rate.
	HPETTickPolicyDelay HPETTickPolicy = "delay"
	// HPETTickPolicyCatchup delivers missed ticks faster until caught up.
	HPETTickPolicyCatchup HPETTickPolicy = "catchup"
	// HPETTickPolicyMerge merges missed ticks into one.
	HPETTickPolicyMerge HPETTickPolicy = "merge"
	// HPETTickPolicyDiscard drops missed ticks.
	HPETTickPolicyDiscard HPETTickPolicy = "discard"
	// PITTickPolicyDelay delivers missed ticks late, at the normal rate.
	PITTickPolicyDelay PITTickPolicy = "delay"
	// PITTickPolicyCatchup delivers missed ticks faster until caught up.
	PITTickPolicyCatchup PITTickPolicy = "catchup"
	// PITTickPolicyDiscard drops missed ticks.
	PITTickPolicyDiscard PITTickPolicy = "discard"
	// RTCTickPolicyDelay delivers missed ticks late, at the normal rate.
	RTCTickPolicyDelay RTCTickPolicy = "delay"
	// RTCTickPolicyCatchup delivers missed ticks faster until caught up.
	RTCTickPolicyCatchup RTCTickPolicy = "catchup"
)

// RTCTimerTrack says what the RTC follows.
type RTCTimerTrack string

// RTC tracks.
const (
	// TrackGuest: the RTC follows guest time.
	TrackGuest RTCTimerTrack = "guest"
	// TrackWall: the RTC follows host wall-clock time.
	TrackWall RTCTimerTrack = "wall"
)

// RTCTimer configures the Real Time Clock.
type RTCTimer struct {
	// TickPolicy is delay or catchup.
	// +optional
	TickPolicy RTCTickPolicy `json:"tickPolicy,omitempty"`
	// Enabled says whether the timer is present. Defaults to true.
	// +optional
	Enabled *bool `json:"present,omitempty"`
	// Track is guest or wall.
	// +optional
	Track RTCTimerTrack `json:"track,omitempty"`
}

// HPETTimer configures the High Precision Event Timer.
type HPETTimer struct {
	// TickPolicy is delay, catchup, merge or discard.
	// +optional
	TickPolicy HPETTickPolicy `json:"tickPolicy,omitempty"`
	// Enabled says whether the timer is present. Defaults to true.
	// +optional
	Enabled *bool `json:"present,omitempty"`
}

// PITTimer configures the Programmable Interval Timer.
type PITTimer struct {
	// TickPolicy is delay, catchup or discard.
	// +optional
	TickPolicy PITTickPolicy `json:"tickPolicy,omitempty"`
	// Enabled says whether the timer is present. Defaults to true.
	// +optional
	Enabled *bool `json:"present,omitempty"`
}

// KVMTimer configures the KVM paravirtual clock.
type KVMTimer struct {
	// Enabled says whether the timer is present. Defaults to true.
	// +optional
	Enabled *bool `json:"present,omitempty"`
}

// HypervTimer configures the Hyper-V reference time counter.
type HypervTimer struct {
	// Enabled says whether the timer is present. Defaults to true.
	// +optional
	Enabled *bool `json:"present,omitempty"`
}
