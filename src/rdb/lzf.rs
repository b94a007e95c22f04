//! LZF decompression (the `lzf_d` format Redis uses for strings with `rdbcompression yes`).
//!
//! Written by hand: the crates that exist either bind the C liblzf or allocate a fresh
//! vector per call, and the scanner needs a bounded decompress into a reused buffer. The
//! format is two instructions (literal run, back reference), documented in liblzf.

use super::error::{DecodeError, Result};

/// The most bytes one compressed byte can expand to: a three-byte back reference
/// (`ctrl`, extended length, offset) yields at most 7 + 255 + 2 = 264 bytes.
const MAX_EXPANSION: u64 = 88;

/// Decompresses `input` (read at absolute `offset`) into `out`, whose bytes it replaces.
/// `expected` is the uncompressed length the dump declares; it is checked against what the
/// input can possibly expand to before anything is reserved, and against what it did.
pub fn decompress_into(input: &[u8], expected: u64, offset: u64, out: &mut Vec<u8>) -> Result<()> {
    if expected > (input.len() as u64).saturating_mul(MAX_EXPANSION) {
        return Err(DecodeError::malformed(
            offset,
            READING,
            format!(
                "declared length {expected} cannot come from {} compressed bytes",
                input.len()
            ),
        ));
    }
    // Sized up front only while that stays in proportion to the input; a header claiming
    // an extreme ratio has to prove it, and the buffer grows as the data does.
    let presized = expected
        <= (input.len() as u64)
            .saturating_mul(4)
            .saturating_add(1 << 20);
    // Presized, `out` keeps the bytes it held (a buffer reused string after string):
    // every byte up to the declared length is written before the length is accepted, so
    // only what it grows by is zeroed, not the whole string each time.
    match presized {
        true => out.resize(expected as usize, 0),
        false => out.clear(),
    }
    let written = expand(input, expected as usize, offset, out, presized)?;
    if written != expected as usize {
        return Err(DecodeError::malformed(
            offset,
            READING,
            format!("decompresses to {written} bytes, {expected} declared"),
        ));
    }
    out.truncate(written);
    Ok(())
}

const READING: &str = "LZF-compressed string";

/// One LZF instruction, checked against the input and the output so far.
enum Instruction {
    /// Copy `len` bytes of the input from `at`.
    Literal { at: usize, len: usize },
    /// Repeat `len` bytes from `distance` back in the output.
    BackReference { distance: usize, len: usize },
}

/// Decodes the instruction at `*i` (advancing it) for an output that already holds
/// `produced` bytes and may hold `limit`: the one place the format is parsed and checked,
/// for both decompressing and validating.
#[inline(always)]
fn next_instruction(
    input: &[u8],
    i: &mut usize,
    produced: usize,
    limit: usize,
    offset: u64,
) -> Result<Instruction> {
    // Every sum below is of small numbers (at most 264 for a length, 8192 for a distance)
    // and positions within `input` or below `limit`; saturating keeps that a fact.
    let start = *i;
    let fail =
        |msg: &str| DecodeError::malformed(offset.saturating_add(start as u64), READING, msg);
    let ctrl = usize::from(input[start]);
    let mut at = start.saturating_add(1);
    let room = limit.saturating_sub(produced);
    let instruction = if ctrl < 32 {
        let len = ctrl.saturating_add(1);
        if len > input.len().saturating_sub(at) {
            return Err(fail("literal run past the end of the compressed data"));
        }
        if len > room {
            return Err(fail("decompresses to more than the declared length"));
        }
        let literal = Instruction::Literal { at, len };
        at = at.saturating_add(len);
        literal
    } else {
        let mut len = ctrl >> 5;
        if len == 7 {
            let Some(&extra) = input.get(at) else {
                return Err(fail("back reference length past the end"));
            };
            len = len.saturating_add(usize::from(extra));
            at = at.saturating_add(1);
        }
        let Some(&low) = input.get(at) else {
            return Err(fail("back reference offset past the end"));
        };
        at = at.saturating_add(1);
        let distance = ((ctrl & 0x1f) << 8 | usize::from(low)).saturating_add(1);
        if distance > produced {
            return Err(fail("back reference before the start of the output"));
        }
        let len = len.saturating_add(2);
        if len > room {
            return Err(fail("decompresses to more than the declared length"));
        }
        Instruction::BackReference { distance, len }
    };
    *i = at;
    Ok(instruction)
}

/// Runs the instruction stream, writing at most `limit` bytes to `out` (already `limit`
/// long when `presized`, else grown). Returns the bytes written.
///
/// The index sums here cannot overflow: [`next_instruction`] has checked every run
/// against the input and every output position against `limit`, a length the input can
/// produce (at most 88 times its size), and slicing checks the rest. They stay plain
/// additions because this is the inner loop of every compressed string.
#[allow(clippy::arithmetic_side_effects)]
fn expand(
    input: &[u8],
    limit: usize,
    offset: u64,
    out: &mut Vec<u8>,
    presized: bool,
) -> Result<usize> {
    let (mut i, mut op) = match presized {
        true => expand_clear_of_the_ends(input, out),
        false => (0, 0),
    };
    while i < input.len() {
        match next_instruction(input, &mut i, op, limit, offset)? {
            Instruction::Literal { at, len } => {
                if presized && at + 32 <= input.len() && op + 32 <= out.len() {
                    // Runs are at most 32 bytes: copy a fixed 32 (the excess is overwritten
                    // by what follows) rather than call `memcpy` for a few bytes.
                    let chunk: [u8; 32] = input[at..at + 32].try_into().expect("32 bytes");
                    out[op..op + 32].copy_from_slice(&chunk);
                } else if presized {
                    out[op..op + len].copy_from_slice(&input[at..at + len]);
                } else {
                    out.extend_from_slice(&input[at..at + len]);
                }
                op += len;
            }
            Instruction::BackReference { distance, len } => {
                if !presized {
                    out.resize(op + len, 0);
                }
                copy_back(out, op, distance, len);
                op += len;
            }
        }
    }
    Ok(op)
}

/// Decodes the instructions that lie clear of both ends (the input holds 34 more bytes,
/// enough for the longest literal run with its control byte; `out` room for the longest
/// back reference and the eight bytes [`copy_back`] may write past it) without the checks
/// [`next_instruction`] makes of each: none can fail there but a back reference before the
/// start of the output, at which this stops for [`expand`]'s checked loop to report it.
/// Returns the positions reached in the input and the output.
#[inline]
#[allow(clippy::arithmetic_side_effects)] // Positions bounded by the loop's condition.
fn expand_clear_of_the_ends(input: &[u8], out: &mut [u8]) -> (usize, usize) {
    let (mut i, mut op) = (0usize, 0usize);
    while i + 34 <= input.len() && op + 272 <= out.len() {
        let ctrl = usize::from(input[i]);
        if ctrl < 32 {
            // A literal run of at most 32 bytes, copied as a fixed 32 (see `expand`).
            let len = ctrl + 1;
            let chunk: [u8; 32] = input[i + 1..i + 33].try_into().expect("32 bytes");
            out[op..op + 32].copy_from_slice(&chunk);
            i += 1 + len;
            op += len;
        } else {
            let (next, distance, len) = back_reference_clear_of_the_end(input, i);
            if distance > op {
                break;
            }
            copy_back(out, op, distance, len);
            i = next;
            op += len;
        }
    }
    (i, op)
}

/// The back reference whose control byte is at `input[i]`, at least three bytes before the
/// input's end: where the next instruction starts, the distance and the length.
#[inline(always)]
#[allow(clippy::arithmetic_side_effects)] // Small sums of bytes and positions in `input`.
fn back_reference_clear_of_the_end(input: &[u8], i: usize) -> (usize, usize, usize) {
    let ctrl = usize::from(input[i]);
    let mut len = ctrl >> 5;
    let mut at = i + 1;
    if len == 7 {
        len += usize::from(input[at]);
        at += 1;
    }
    let distance = ((ctrl & 0x1f) << 8 | usize::from(input[at])) + 1;
    (at + 1, distance, len + 2)
}

/// Copies `len` bytes from `distance` back to `op`; the ranges overlap when the distance
/// is shorter than the length, which repeats the pattern. Back references are mostly a
/// few bytes long, so they are copied eight bytes at a time (a register, not a `memmove`
/// call) whenever the source stays at least eight bytes behind and the buffer has room.
#[inline]
#[allow(clippy::arithmetic_side_effects)] // Within `out`: see `expand`.
fn copy_back(out: &mut [u8], op: usize, distance: usize, len: usize) {
    let from = op - distance;
    if distance >= 8 && op + len + 8 <= out.len() {
        let mut k = 0;
        while k < len {
            let chunk: [u8; 8] = out[from + k..from + k + 8].try_into().expect("8 bytes");
            out[op + k..op + k + 8].copy_from_slice(&chunk);
            k += 8;
        }
    } else {
        for k in 0..len {
            out[op + k] = out[from + k];
        }
    }
}

/// Checks that `input` is a well-formed LZF stream decompressing to exactly `expected`
/// bytes, without producing them: the walk touches only the instruction bytes, so a
/// string's declared length can be trusted at a fraction of the cost of decompressing.
pub fn validate(input: &[u8], expected: u64, offset: u64) -> Result<()> {
    // A length beyond the address space is never reached: the final check reports it.
    let limit = usize::try_from(expected).unwrap_or(usize::MAX);
    let (mut i, mut produced) = validate_clear_of_the_end(input, limit);
    while i < input.len() {
        let len = match next_instruction(input, &mut i, produced, limit, offset)? {
            Instruction::Literal { len, .. } | Instruction::BackReference { len, .. } => len,
        };
        produced = produced.saturating_add(len);
    }
    if produced as u64 != expected {
        return Err(DecodeError::malformed(
            offset,
            READING,
            format!("decompresses to {produced} bytes, {expected} declared"),
        ));
    }
    Ok(())
}

/// Walks the instructions that lie clear of the input's end (it holds the longest literal
/// run with its control byte), as [`expand_clear_of_the_ends`] decodes them, without
/// [`next_instruction`]'s checks of the input: stops at an instruction that would make
/// more than `limit` bytes or reach before the start, for [`validate`]'s checked loop to
/// report it. Returns the positions reached in the input and the output.
#[inline]
#[allow(clippy::arithmetic_side_effects)] // Positions bounded by the loop's condition.
fn validate_clear_of_the_end(input: &[u8], limit: usize) -> (usize, usize) {
    let (mut i, mut produced) = (0usize, 0usize);
    while i + 34 <= input.len() {
        let ctrl = usize::from(input[i]);
        let (next, len) = if ctrl < 32 {
            (i + 2 + ctrl, 1 + ctrl)
        } else {
            let (next, distance, len) = back_reference_clear_of_the_end(input, i);
            if distance > produced {
                break;
            }
            (next, len)
        };
        if len > limit - produced {
            break;
        }
        i = next;
        produced += len;
    }
    (i, produced)
}

/// The first `N` bytes `input` decompresses to, decoding only the instructions that make
/// them (a literal run, at most a few back references): `None` when the stream is
/// malformed or ends before `N` bytes. For a look at a header without decompressing the
/// whole string.
pub fn prefix<const N: usize>(input: &[u8]) -> Option<[u8; N]> {
    let mut out = [0u8; N];
    let (mut produced, mut i) = (0usize, 0usize);
    while produced < N && i < input.len() {
        // Positions below `N`: `next_instruction` checked each run against the input and
        // each distance against what was produced.
        match next_instruction(input, &mut i, produced, usize::MAX, 0).ok()? {
            Instruction::Literal { at, len } => {
                for &b in input.get(at..at.saturating_add(len))?.iter() {
                    let Some(o) = out.get_mut(produced) else {
                        break;
                    };
                    *o = b;
                    produced = produced.saturating_add(1);
                }
            }
            Instruction::BackReference { distance, len } => {
                for _ in 0..len {
                    let Some(&b) = out.get(produced.saturating_sub(distance)) else {
                        break;
                    };
                    let Some(o) = out.get_mut(produced) else {
                        break;
                    };
                    *o = b;
                    produced = produced.saturating_add(1);
                }
            }
        }
    }
    (produced == N).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_decodes_only_its_bytes() {
        // "ab" literal, then "ababab" by reference: the first 5 bytes, and all 8.
        let input = [0x01, b'a', b'b', (4 << 5), 0x01];
        assert_eq!(prefix::<5>(&input), Some(*b"ababa"));
        assert_eq!(prefix::<8>(&input), Some(*b"abababab"));
        assert_eq!(prefix::<9>(&input), None);
        assert_eq!(prefix::<1>(&[(1 << 5), 0x00]), None);
        assert_eq!(prefix::<2>(&[0x05, b'a']), None);
    }

    #[test]
    fn literal_and_overlapping_back_reference() {
        // "ab" literal, then a back reference of length 6 at distance 2: "abababab".
        let input = [0x01, b'a', b'b', (4 << 5), 0x01];
        let mut out = Vec::new();
        decompress_into(&input, 8, 0, &mut out).unwrap();
        assert_eq!(out, b"abababab");
    }

    #[test]
    fn validation_agrees_with_decompression() {
        let input = [0x01, b'a', b'b', (4 << 5), 0x01];
        assert!(validate(&input, 8, 0).is_ok());
        assert!(validate(&input, 9, 0).is_err());
        assert!(validate(&input, 7, 0).is_err());
        // A back reference reaching before the first byte.
        assert!(validate(&[(1 << 5), 0x00], 3, 0).is_err());
    }

    #[test]
    fn long_and_repeating_back_references() {
        // 20 literal bytes, then a 30-byte reference 10 back, then one 3 back (overlapping).
        let mut input = vec![19];
        input.extend(b"abcdefghijklmnopqrst");
        input.extend([(7 << 5), 21, 9]); // len 7 + 21 + 2 = 30, distance 10
        input.extend([(1 << 5), 2]); // len 3, distance 3
        let mut out = Vec::new();
        decompress_into(&input, 53, 0, &mut out).unwrap();
        // Each output byte of a back reference copies the one `distance` before it.
        let mut model = b"abcdefghijklmnopqrst".to_vec();
        for _ in 0..30 {
            model.push(model[model.len() - 10]);
        }
        for _ in 0..3 {
            model.push(model[model.len() - 3]);
        }
        assert_eq!(out, model);
        assert!(validate(&input, 53, 0).is_ok());
    }

    #[allow(clippy::arithmetic_side_effects)]
    /// A stream of random literal runs and back references (lengths 3 to 264, distances up
    /// to 8,192 or what was produced), and what it decompresses to, byte by byte.
    fn random_stream(seed: u64, instructions: usize) -> (Vec<u8>, Vec<u8>) {
        let mut x = seed;
        let mut next = move |n: usize| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as usize % n
        };
        let (mut input, mut model) = (Vec::new(), Vec::<u8>::new());
        for _ in 0..instructions {
            if model.is_empty() || next(3) == 0 {
                let len = 1 + next(32);
                input.push((len - 1) as u8);
                for _ in 0..len {
                    let b = next(256) as u8;
                    input.push(b);
                    model.push(b);
                }
            } else {
                let len = 3 + next(262);
                let distance = 1 + next(model.len().min(8192));
                let (short, extra) = if len - 2 >= 7 {
                    (7, Some(len - 9))
                } else {
                    (len - 2, None)
                };
                input.push((short << 5 | (distance - 1) >> 8) as u8);
                input.extend(extra.map(|e| e as u8));
                input.push(((distance - 1) & 0xff) as u8);
                for _ in 0..len {
                    model.push(model[model.len() - distance]);
                }
            }
        }
        (input, model)
    }

    #[test]
    fn long_streams_decompress_as_byte_by_byte() {
        // One buffer for every stream, as the decoder reuses it: each holds its own bytes
        // only, whether the one before was longer or shorter.
        let mut out = Vec::new();
        for seed in 0..20 {
            let (input, model) = random_stream(seed, 400 - 15 * seed as usize);
            decompress_into(&input, model.len() as u64, 0, &mut out).unwrap();
            assert!(out == model, "seed {seed}");
            assert!(validate(&input, model.len() as u64, 0).is_ok());
        }
    }

    #[test]
    #[allow(clippy::arithmetic_side_effects)]
    fn a_reference_before_the_start_deep_in_a_long_stream_is_placed() {
        let (mut input, model) = random_stream(7, 40);
        let at = input.len();
        // Past the whole output so far (under the farthest distance there is, 8,192):
        // reaches before its first byte.
        assert!((300..8192).contains(&model.len()), "{}", model.len());
        let distance = model.len() + 1;
        input.push((1 << 5 | (distance - 1) >> 8) as u8);
        input.push(((distance - 1) & 0xff) as u8);
        let (tail, _) = random_stream(8, 50);
        input.extend(tail);
        let mut out = Vec::new();
        let err = decompress_into(&input, input.len() as u64 * 80, 1000, &mut out).unwrap_err();
        assert_eq!(err.offset, 1000 + at as u64, "{err}");
        assert!(err.to_string().contains("before the start"), "{err}");
        let err = validate(&input, input.len() as u64 * 80, 1000).unwrap_err();
        assert_eq!(err.offset, 1000 + at as u64, "{err}");
        assert!(err.to_string().contains("before the start"), "{err}");
    }

    /// Validating a stream says what decompressing it says, to the byte, however it was
    /// damaged and whatever length was declared.
    #[test]
    #[allow(clippy::arithmetic_side_effects)]
    fn validating_agrees_with_decompressing_on_damaged_streams() {
        let mut failures = 0;
        for seed in 0..200u64 {
            let (mut input, model) = random_stream(seed, 60);
            let at = (seed as usize * 7919) % input.len();
            input[at] ^= 1 << (seed % 8);
            let declared = match seed % 3 {
                0 => model.len(),
                1 => model.len() - 1,
                _ => model.len() + 300,
            } as u64;
            let mut out = Vec::new();
            let decompressed = decompress_into(&input, declared, 50, &mut out);
            let validated = validate(&input, declared, 50);
            match (decompressed, validated) {
                (Ok(()), Ok(())) => {}
                (Err(d), Err(v)) => {
                    failures += 1;
                    assert_eq!((d.offset, d.to_string()), (v.offset, v.to_string()));
                }
                (d, v) => panic!("seed {seed}: {d:?} against {v:?}"),
            }
        }
        assert!(failures > 100, "{failures}");
    }

    #[test]
    fn declared_length_mismatch_is_an_error() {
        let input = [0x01, b'a', b'b'];
        let mut out = Vec::new();
        let err = decompress_into(&input, 3, 40, &mut out).unwrap_err();
        assert_eq!(err.offset, 40);
        assert!(err.to_string().contains("2 bytes, 3 declared"), "{err}");
    }

    #[test]
    fn impossible_declared_length_allocates_nothing() {
        let mut out = Vec::new();
        let err = decompress_into(&[0x00, b'x'], u64::MAX, 7, &mut out).unwrap_err();
        assert!(err.to_string().contains("cannot come from"), "{err}");
        assert_eq!(out.capacity(), 0);
    }
}
