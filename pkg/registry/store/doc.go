// Package store holds the pieces every NativeVirt resource's registry shares: building a
// genericregistry.Store from a resource description, the /status REST endpoint, and table
// conversion for `kubectl get`.
package store
