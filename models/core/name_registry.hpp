#pragma once
// One registry of named implementations, for every kind that is chosen by name (pipeline schedules, frameworks,
// checkpoint methods and storage tiers, time distributions, scheduler policies, export targets, subcommands): add,
// find by name, list the names, and the InputError for a name that is not there, with the closest known ones.
//
// An entry is named by a `name` data member (PolicyInfo, StorageTier, ...), a `name()` member function, or either of
// those reached through a pointer, raw or owning (const PipelineSchedule*, std::unique_ptr<Exporter>).
//
// Each kind keeps its one registry in a function-local static (a Meyers singleton), in the .cpp that holds the
// kind's built-ins:
//
//   NameRegistry<PolicyInfo>& registry() {
//     static NameRegistry<PolicyInfo> r;
//     return r;
//   }
//
// It is built on first use, so a registration running from the static initialiser of any translation unit, in any
// order, finds it constructed (a registry at namespace scope could still be unbuilt when another file's
// registration runs).
#include <algorithm>
#include <concepts>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"  // closest_names, join

namespace trainsim {

namespace name_registry_detail {
template <typename T>
concept NamedByMember = requires(const T& e) {
  { e.name } -> std::convertible_to<std::string_view>;
};
template <typename T>
concept NamedByFunction = requires(const T& e) {
  { e.name() } -> std::convertible_to<std::string_view>;
};
template <typename T>
concept Pointer = requires(const T& e) { *e; };

// The entry's name: a reference to its member, or what its name() returns (a temporary lives to the end of the
// caller's full expression).
template <typename Entry>
decltype(auto) name_of(const Entry& e) {
  if constexpr (NamedByMember<Entry>) {
    return (e.name);
  } else if constexpr (NamedByFunction<Entry>) {
    return e.name();
  } else {
    static_assert(Pointer<Entry>, "a NameRegistry entry has a `name` member or `name()`, directly or through a pointer");
    return name_of(*e);
  }
}
}  // namespace name_registry_detail

// The order entries are kept and listed in: by name, or as registered (subcommands in --help, pipeline schedules in
// the order of their Schedule ids).
enum class NameOrder { ByName, Registration };

// How NameRegistry::unknown words its error; every part has a default.
struct UnknownNameWording {
  // Before the names: "a scheduling policy" -> "expected a scheduling policy: a, b, c". Empty: "expected one of a, b, c".
  std::string what = {};
  // The value as the message shows it (e.g. JSON text, or a flag's value as typed). Default: the name in double quotes.
  std::optional<std::string> shown = std::nullopt;
  // Default: the `closest` known names nearest the given one, "closest: a, b, c" (none when nothing is registered).
  // A text replaces them; "" gives no hint.
  std::optional<std::string> hint = std::nullopt;
  std::size_t closest = 3;
};

template <typename Entry>
class NameRegistry {
 public:
  explicit NameRegistry(NameOrder order = NameOrder::ByName) : order_(order) {}

  // Adds an entry in its place (see NameOrder). Two entries of one name are a programming error: std::logic_error.
  void add(Entry e) {
    const std::string name(name_registry_detail::name_of(e));
    if (find(name)) throw std::logic_error("two registrations named \"" + name + "\"");
    auto at = entries_.end();
    if (order_ == NameOrder::ByName)
      at = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& x) { return std::string_view(name_registry_detail::name_of(x)) > name; });
    entries_.insert(at, std::move(e));
  }

  // nullptr when no entry has that name.
  const Entry* find(std::string_view name) const {
    for (const Entry& e : entries_)
      if (std::string_view(name_registry_detail::name_of(e)) == name) return &e;
    return nullptr;
  }

  const std::vector<Entry>& entries() const { return entries_; }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    out.reserve(entries_.size());
    for (const Entry& e : entries_) out.emplace_back(name_registry_detail::name_of(e));
    return out;
  }

  // "one of a, b, c", or with `what` "a scheduling policy: a, b, c": what an error expected instead of an unknown name.
  std::string expected(const std::string& what = {}) const { return (what.empty() ? "one of " : what + ": ") + join(names()); }

  // "closest: a, b": up to `n` known names nearest `name`, best first (closest_names); empty when none is registered.
  std::string closest(const std::string& name, std::size_t n = 3) const {
    const std::vector<std::string> near = closest_names(name, names(), n);
    return near.empty() ? std::string() : "closest: " + join(near);
  }

  // Throws the InputError for `name`, unknown here, at `path` (a JSON path or a flag):
  //   --policy: got "fifp"; expected one of backfill, fifo, ... (closest: fifo, ...)
  [[noreturn]] void unknown(const std::string& path, const std::string& name, const UnknownNameWording& wording = {}) const {
    throw InputError(path, wording.shown ? *wording.shown : "\"" + name + "\"", expected(wording.what),
                     wording.hint ? *wording.hint : closest(name, wording.closest));
  }

 private:
  NameOrder order_;
  std::vector<Entry> entries_;
};

}  // namespace trainsim
