import Glibc

/// A growable run of bytes for hot paths. Appends are pointer stores and
/// memcpy; `removeAll()` keeps the storage, so a buffer reused for every
/// record allocates only while it grows. `[UInt8]` appends go through
/// uniqueness checks and generic code that cost more than the copying.
public final class ByteBuffer {
    @usableFromInline var storage: UnsafeMutablePointer<UInt8>
    @usableFromInline var capacity: Int
    @usableFromInline var used: Int

    /// The number of bytes held.
    @inlinable
    public var count: Int { used }

    public init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        storage = .allocate(capacity: self.capacity)
        used = 0
    }

    deinit { storage.deallocate() }

    public var isEmpty: Bool { count == 0 }

    /// The first byte; valid until the next append.
    @inlinable
    public var start: UnsafeMutablePointer<UInt8> { storage }

    /// The bytes held; valid until the next append.
    @inlinable
    public var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: storage, count: count) }

    /// Bytes `range` of the buffer; valid until the next append.
    @inlinable
    public subscript(range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: storage + range.lowerBound, count: range.count)
    }

    /// A copy of the bytes as an array.
    public var array: [UInt8] { Array(bytes) }

    /// Empties the buffer, keeping its storage.
    @inlinable
    public func removeAll() { used = 0 }

    /// Empties the buffer and, when its storage has grown beyond `capacity`
    /// bytes, gives that storage back for `capacity` bytes.
    public func removeAll(keepingAtMost capacity: Int) {
        used = 0
        guard self.capacity > capacity else { return }
        storage.deallocate()
        self.capacity = max(capacity, 16)
        storage = .allocate(capacity: self.capacity)
    }

    /// Keeps the first `count` bytes only.
    public func truncate(to count: Int) { used = min(max(count, 0), used) }

    /// Makes room for `extra` more bytes and returns where they go; call
    /// `advance(by:)` with the number actually written.
    @inlinable
    public func reserve(_ extra: Int) -> UnsafeMutablePointer<UInt8> {
        if capacity - count < extra { grow(extra) }
        return storage + count
    }

    /// Counts `written` bytes stored through the pointer `reserve(_:)` gave.
    @inlinable
    public func advance(by written: Int) {
        assert(written >= 0 && written <= capacity - count)
        used += min(max(written, 0), capacity - count)
    }

    @usableFromInline
    func grow(_ extra: Int) {
        var newCapacity = capacity * 2
        while newCapacity - count < extra { newCapacity *= 2 }
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        grown.update(from: storage, count: count)
        storage.deallocate()
        storage = grown
        capacity = newCapacity
    }

    @inlinable
    public func append(_ byte: UInt8) {
        if count == capacity { grow(1) }
        storage[used] = byte
        used += 1
    }

    /// Appends `bytes`, which must not point into this buffer (growing it
    /// would free them).
    @inlinable @inline(__always)
    public func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        let count = bytes.count
        let destination = reserve(count)
        // A call to memcpy costs more than copying a few bytes.
        if count <= 8 {
            var index = 0
            while index < count {
                destination[index] = source[index]
                index &+= 1
            }
        } else {
            memcpy(destination, source, count)
        }
        used += count
    }

    @inlinable @inline(__always)
    public func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    public func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    /// Appends the UTF-8 of a string. (Not an `append(_:)` overload: a
    /// literal would pick it over the StaticString one.)
    public func append(utf8 text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    /// Appends a decimal integer.
    public func appendDecimal(_ number: Int64) {
        let out = reserve(20)
        var magnitude = number.magnitude
        var digits = 0
        repeat {
            out[digits] = UInt8(truncatingIfNeeded: magnitude % 10) + 0x30
            magnitude /= 10
            digits += 1
        } while magnitude > 0
        if number < 0 {
            out[digits] = 0x2D
            digits += 1
        }
        var low = 0
        var high = digits - 1
        while low < high {
            let byte = out[low]
            out[low] = out[high]
            out[high] = byte
            low += 1
            high -= 1
        }
        used += digits
    }

    /// Appends `byte` as two hex digits.
    @inlinable @inline(__always)
    public func appendHex(_ byte: UInt8, upperCase: Bool) {
        let digits = upperCase ? Hex.upper : Hex.lower
        let out = reserve(2)
        out[0] = digits[Int(byte >> 4)]
        out[1] = digits[Int(byte & 0x0F)]
        used += 2
    }

    /// Drops the first `count` bytes, moving the rest to the front.
    public func removeFirst(_ count: Int) {
        let dropped = min(max(count, 0), used)
        if dropped < used { memmove(storage, storage + dropped, used - dropped) }
        used -= dropped
    }

    /// Room left before the buffer has to grow.
    public var freeCapacity: Int { capacity - used }
}

/// The digits of hexadecimal numbers, shared by every encoder.
public enum Hex {
    /// `0123456789ABCDEF`, as percent-encoding writes them.
    @inlinable public static var upper: UnsafePointer<UInt8> { ("0123456789ABCDEF" as StaticString).utf8Start }
    /// `0123456789abcdef`, as JSON escapes and nonces are written.
    @inlinable public static var lower: UnsafePointer<UInt8> { ("0123456789abcdef" as StaticString).utf8Start }
}

/// Byte comparisons the parsers share.
public enum RawBytes {
    /// Whether `bytes` is exactly `literal`.
    @inlinable @inline(__always)
    public static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count == count else { return false }
        guard count > 0, let base = bytes.baseAddress else { return true }
        // A member's name is a few bytes: cheaper compared here than in a call.
        guard count > 16 else {
            for offset in 0..<count where base[offset] != literal.utf8Start[offset] { return false }
            return true
        }
        return memcmp(base, literal.utf8Start, count) == 0
    }

    /// Whether `left` and `right` hold the same bytes.
    @inlinable
    public static func equal(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        guard left.count == right.count else { return false }
        guard left.count > 0, let a = left.baseAddress, let b = right.baseAddress else { return true }
        return memcmp(a, b, left.count) == 0
    }

    /// Bytewise order of `left` and `right`: negative, zero or positive.
    @inlinable
    public static func compare(_ left: UnsafePointer<UInt8>, _ leftCount: Int,
                               _ right: UnsafePointer<UInt8>, _ rightCount: Int) -> Int {
        let common = min(leftCount, rightCount)
        var index = 0
        while index < common {
            let a = left[index]
            let b = right[index]
            if a != b { return Int(a) - Int(b) }
            index += 1
        }
        return leftCount - rightCount
    }
}
