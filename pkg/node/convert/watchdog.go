package convert

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// convertWatchdog gives the i6300esb watchdog; its action defaults to reset.
func convertWatchdog(w *kubevirtv1.Watchdog, p *field.Path) (*Watchdog, field.ErrorList) {
	if w == nil {
		return nil, nil
	}
	p = p.Child("watchdog")
	switch {
	case w.Diag288 != nil:
		return nil, field.ErrorList{field.NotSupported(p, "diag288", []string{"i6300esb"})}
	case w.I6300ESB == nil:
		return nil, field.ErrorList{field.Required(p.Child("i6300esb"), "a watchdog needs a model")}
	}
	action := w.I6300ESB.Action
	if action == "" {
		action = kubevirtv1.WatchdogActionReset
	}
	switch action {
	case kubevirtv1.WatchdogActionPoweroff, kubevirtv1.WatchdogActionReset, kubevirtv1.WatchdogActionShutdown:
	default:
		return nil, field.ErrorList{field.NotSupported(p.Child("i6300esb", "action"), action, []string{"poweroff", "reset", "shutdown"})}
	}
	out := &Watchdog{Model: "i6300esb", Action: string(action)}
	if w.Name != "" {
		out.Alias = &Alias{Name: "ua-" + w.Name}
	}
	return out, nil
}
