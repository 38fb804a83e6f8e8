// Command hello is the memory floor of any static Go program: it writes a
// line and exits. bench/memfloor.sh measures its peak RSS.
package main

import "os"

func main() { os.Stdout.WriteString("hello\n") }
