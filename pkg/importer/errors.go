package importer

import (
	"errors"
	"fmt"
)

// PermanentError is a failure that retrying cannot fix.
type PermanentError struct{ Msg string }

func (e *PermanentError) Error() string { return e.Msg }

// permanentf returns a PermanentError.
func permanentf(format string, args ...any) error {
	return &PermanentError{Msg: fmt.Sprintf(format, args...)}
}

// IsPermanent says whether err (or an error it wraps) is a PermanentError.
func IsPermanent(err error) bool {
	var p *PermanentError
	return errors.As(err, &p)
}
