// PEP 425 compatibility tags (reference/spec-platform-compatibility-tags.rst):
// compressed tag sets and their expansion, the validity rules of
// docs/verify-rules.md F6, ABI coherence (F9), and the tags of a build. Platform families (F8)
// are in platform.h, included here for the callers that check whole names.
#pragma once

#include <compare>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/common/finding.h"
#include "sagebuild/wheel/platform.h"

namespace sb::wheel {

struct Tag {
  std::string interpreter;  // "cp312", "py3"
  std::string abi;          // "cp312", "abi3", "none"
  std::string platform;     // "manylinux_2_28_x86_64", "any"
  std::string str() const;  // "cp312-cp312-manylinux_2_28_x86_64"
  auto operator<=>(const Tag&) const = default;
};

// The three '-'-separated components of a tag triple, each split on '.'
// (a compressed tag set such as "py2.py3-none-any").
struct TagSets {
  std::vector<std::string> interpreters, abis, platforms;
  std::string str() const;  // joined back as written
};

// Most tags one compressed triple may expand to (packaging's `limit=`):
// a file name such as a.b.c...-x.y...-p.q... must not make us allocate
// an unbounded product.
inline constexpr std::size_t kMaxExpandedTags = 4096;

// Splits "py2.py3-none-any" into its sets. nullopt (with `why`) when there are
// not exactly three components. Members are kept as written; see check_tag_sets.
std::optional<TagSets> split_tag_triple(std::string_view triple, std::string* why = nullptr);

// The cartesian product in interpreter, abi, platform order, lowercased
// (packaging lowercases tags). nullopt (with `why`) above `limit` tags.
std::optional<std::vector<Tag>> expand(const TagSets& sets, std::size_t limit = kMaxExpandedTags,
                                       std::string* why = nullptr);

// Split + F6 errors + expansion in one step: what a tag triple means.
// nullopt (with `why`) when the triple is not a valid tag set.
std::optional<std::vector<Tag>> parse_tags(std::string_view triple, std::size_t limit = kMaxExpandedTags,
                                           std::string* why = nullptr);

// F6: every component and every '.'-member non-empty (E), interpreter members
// Python identifiers (E), members lowercase (W), each set sorted (W).
// `member` is copied into the findings (the archive member, usually empty).
Findings check_tag_sets(const TagSets& sets, std::string_view member = {});

// ---- ABI coherence (F9) --------------------------------------------------

// abi3 only with cpXY interpreters; a cpXY[t] abi only with the same cpXY
// interpreter; the free-threaded cp313t ABI is never abi3. All W: installers
// and PyPI accept incoherent sets, but they are almost always mistakes.
Findings check_abi_coherence(const TagSets& sets, std::string_view member = {});

// ---- The tags of one of our builds ---------------------------------------

// How a build of ours serves CPython: one abi3 wheel for every CPython from
// its floor up (the limited API), or one wheel per interpreter (cpXY-cpXY).
// The one type for the matrix, the toolchains and build_info.json.
enum class AbiMode { abi3, per_interpreter };

std::string_view to_string(AbiMode mode);  // "abi3", "per-interpreter"

struct InterpreterAbi {
  std::string interpreter;
  std::string abi;
};

// Tags for building against CPython `python_version` ("3.12", or "3.13t" for
// a free-threaded build) without running it. abi3 tags the floor ("3.9" ->
// cp39-abi3) and requires python_version >= abi3_floor and a GIL build;
// free-threading starts at 3.13 and gives cp313-cp313t (a cp313t interpreter
// tag would match no installer).
std::optional<InterpreterAbi> cpython_tags(std::string_view python_version, AbiMode mode,
                                           std::string_view abi3_floor = "3.9", std::string* why = nullptr);

// Splits on `sep`, keeping empty fields (the tag and file-name rules reject them).
std::vector<std::string> split_fields(std::string_view s, char sep);

}  // namespace sb::wheel
