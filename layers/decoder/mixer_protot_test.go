package decoder

import "testing"

// TestProtoTDecoder_StateShapes: a 3-layer ProtoT decoder's state is the memory of every layer plus the
// convolution buffers of layers 0 and 1 (conformance_test.go checks that Step decodes with it).
func TestProtoTDecoder_StateShapes(t *testing.T) {
	if n := len(StateShapes(protoTTinyConfig(), testB, 0)); n != 2+2+1 {
		t.Fatalf("%d state tensors, want 5", n)
	}
}
