import FuzzTargets

/// libFuzzer's entry: one input, checked by `Headers`.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    Headers.run(UnsafeBufferPointer(start: data, count: size))
    return 0
}
