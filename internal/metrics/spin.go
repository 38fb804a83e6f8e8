package metrics

import "runtime"

func spinWait() { runtime.Gosched() }
