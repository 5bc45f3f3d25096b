import FuzzTargets

/// libFuzzer's entry: one input, checked by `RecordTexts`.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    RecordTexts.run(UnsafeBufferPointer(start: data, count: size))
    return 0
}
