package client

import (
	"os"
	"runtime"
)

// uringExpected reports whether the io_uring engine works here: Linux, a
// kernel with io_uring enabled and new enough (GAB_TEST_NO_URING=1 leaves
// it out, as on a kernel without it).
func uringExpected() bool {
	return runtime.GOOS == "linux" && os.Getenv("GAB_TEST_NO_URING") == "" && uringAvailable() == nil
}
