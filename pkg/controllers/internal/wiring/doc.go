// Package wiring is the constructor scaffolding every NativeVirt controller repeated in its New:
// the event handlers of the controller's own resource, registering handlers on informers,
// reading the object of a delete event, and a status write that answers with the new
// resourceVersion. The controllers keep what differs between them (which children they watch and
// how a child's event finds its owner) and take the rest from here.
package wiring
