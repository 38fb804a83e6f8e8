package pooler_test

import "fmt"

func fmtSscan(s string, pid *int) (int, error) { return fmt.Sscan(s, pid) }
