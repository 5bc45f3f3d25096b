import Glibc

/// Calls `call`, a system call that answers -1 and sets errno when it fails,
/// again for as long as it fails with EINTR (a signal came while it waited):
/// the one place where an interrupted call is retried. Returns its first
/// other answer, errno as that call left it.
@inlinable @inline(__always)
public func retryingOnInterrupt<Value: SignedInteger>(_ call: () -> Value) -> Value {
    while true {
        let value = call()
        if value >= 0 || errno != EINTR { return value }
    }
}

/// write(2) until every byte is written. Returns errno on failure, 0 on success.
@discardableResult
public func writeAll(fd: Int32, _ bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
    guard var pointer = bytes.baseAddress else { return 0 }
    var remaining = bytes.count
    while remaining > 0 {
        let written = retryingOnInterrupt { write(fd, pointer, remaining) }
        if written < 0 { return errno }
        pointer += written
        remaining -= written
    }
    return 0
}
