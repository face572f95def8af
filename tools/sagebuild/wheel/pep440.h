// PEP 440 versions and version specifiers
// (reference/spec-version-specifiers.rst): parsing every permitted
// spelling, the normalized form, the total order, and specifier sets as
// used by Requires-Python, Requires-Dist and our torch pin.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sb::wheel {

// Pre-release kinds in their normalized spelling: a < b < rc.
enum class PreKind { Alpha, Beta, Rc };
std::string_view to_string(PreKind k);  // "a" | "b" | "rc"

struct PreRelease {
  PreKind kind = PreKind::Alpha;
  std::uint64_t number = 0;
  auto operator<=>(const PreRelease&) const = default;
};

// One '.'-separated segment of a local version label. Numeric segments keep
// their digits (leading zeros stripped) as text, so a label such as
// +20250101123456789012345 never overflows; they compare as numbers.
struct LocalSegment {
  std::string text;  // lowercase
  bool numeric = false;
};

// Release, epoch, pre, post and dev numbers are uint64: a larger number is
// rejected by parse_version with an explicit overflow message (as uv does)
// rather than wrapped.
struct Version {
  std::uint64_t epoch = 0;
  std::vector<std::uint64_t> release;  // at least one component once parsed
  std::optional<PreRelease> pre;
  std::optional<std::uint64_t> post;
  std::optional<std::uint64_t> dev;
  std::vector<LocalSegment> local;  // empty: no local label

  std::string str() const;         // the normalized form, e.g. "1!2.0rc1.post2.dev3+ubuntu.1"
  std::string public_str() const;  // str() without "+local"
  std::string local_str() const;   // the label without '+', "" when none
  Version public_version() const;  // local label dropped
  Version base_version() const;    // epoch and release only

  bool is_prerelease() const { return pre.has_value() || dev.has_value(); }
  bool is_postrelease() const { return post.has_value(); }
  bool is_devrelease() const { return dev.has_value(); }

  // The spec's total order: trailing zeros of the release are ignored
  // (1.0 == 1.0.0), .devN < aN < bN < rcN < final < .postN, and a local label
  // sorts after the same public version (numeric segments > alphanumeric).
  std::strong_ordering operator<=>(const Version& other) const;
  bool operator==(const Version& other) const;
};

// Accepts every spelling the spec permits: any case, leading 'v', leading and
// trailing whitespace, '-', '_' or '.' separators, alpha/beta/c/pre/preview,
// rev/r, "-N" implicit post releases, implicit 0 numbers, "-"/"_" in local
// labels. On failure returns nullopt and, when `why` is given, says what was
// found and what was expected.
std::optional<Version> parse_version(std::string_view text, std::string* why = nullptr);

// True when `text` is a valid version already spelled in normalized form.
bool is_normalized(std::string_view text);

// ---- Specifiers ---------------------------------------------------------

enum class Operator {
  Equal,          // ==  (also ==V.* with wildcard)
  NotEqual,       // !=  (also !=V.*)
  LessEqual,      // <=
  GreaterEqual,   // >=
  Less,           // <
  Greater,        // >
  Compatible,     // ~=
  ArbitraryEqual  // ===
};
std::string_view to_string(Operator op);

struct Specifier {
  Operator op = Operator::Equal;
  Version version;        // unused for ===
  bool wildcard = false;  // "==1.2.*" / "!=1.2.*"
  std::string arbitrary;  // the operand of === as written

  // Whether `v` satisfies this clause, ignoring the pre-release policy
  // (that belongs to SpecifierSet::contains).
  bool matches(const Version& v) const;
  // True when the clause names a pre-release (>=1.0a1, <2.0.dev0, ==2.0rc1.*),
  // which makes pre-releases acceptable for the whole set (not for != / ===).
  bool names_prerelease() const;
  std::string str() const;  // normalized, e.g. ">=3.9", "==2.8.*"
};

std::optional<Specifier> parse_specifier(std::string_view text, std::string* why = nullptr);

class SpecifierSet {
 public:
  SpecifierSet() = default;
  explicit SpecifierSet(std::vector<Specifier> specs) : specs_(std::move(specs)) {}

  const std::vector<Specifier>& specifiers() const { return specs_; }
  bool empty() const { return specs_.empty(); }

  // Every clause matches. Pre-releases (and dev releases) are excluded unless
  // `prereleases` is true or a clause itself names a pre-release.
  bool contains(const Version& v, bool prereleases = false) const;
  std::string str() const;  // clauses joined by ',' in the order given

 private:
  std::vector<Specifier> specs_;
};

// Comma-separated clauses with optional whitespace; "" is the empty set
// (which contains every final release).
std::optional<SpecifierSet> parse_specifier_set(std::string_view text, std::string* why = nullptr);

}  // namespace sb::wheel
