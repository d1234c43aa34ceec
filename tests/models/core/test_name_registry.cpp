// The generic name registry every kind chosen by name uses (models/core/name_registry.hpp): order, lookup, the error
// for an unknown name, duplicates, and entries named through owning pointers.
#include <doctest/doctest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/core/errors.hpp"
#include "models/core/name_registry.hpp"

using namespace trainsim;

namespace {

struct Policy {
  std::string name;
  int rank = 0;
};

class Target {
 public:
  virtual ~Target() = default;
  virtual std::string name() const = 0;
};
class Slurm final : public Target {
 public:
  std::string name() const override { return "slurm"; }
};
class Volcano final : public Target {
 public:
  std::string name() const override { return "volcano"; }
};
class Kubeflow final : public Target {
 public:
  std::string name() const override { return "kubeflow"; }
};

NameRegistry<Policy> policies(const std::vector<std::string>& names, NameOrder order = NameOrder::ByName) {
  NameRegistry<Policy> r(order);
  int rank = 0;
  for (const auto& n : names) r.add({n, rank++});
  return r;
}

// The message of the InputError `f` throws ("" when it throws none).
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("name registry: entries stay in name order whatever order they were added in") {
  const std::vector<std::string> sorted{"backfill", "fifo", "priority", "sjf"};
  CHECK(policies({"sjf", "fifo", "backfill", "priority"}).names() == sorted);
  CHECK(policies({"priority", "backfill", "sjf", "fifo"}).names() == sorted);
  CHECK(policies({"backfill", "fifo", "priority", "sjf"}).names() == sorted);
  // The entries themselves move with their names.
  const auto r = policies({"sjf", "fifo", "backfill", "priority"});
  CHECK(r.entries().front().name == "backfill");
  CHECK(r.entries().front().rank == 2);
  CHECK(r.entries().back().rank == 0);
}

TEST_CASE("name registry: registration order, for kinds listed as registered") {
  CHECK(policies({"gpipe", "1f1b", "interleaved"}, NameOrder::Registration).names() ==
        std::vector<std::string>{"gpipe", "1f1b", "interleaved"});
}

TEST_CASE("name registry: find by name") {
  const auto r = policies({"sjf", "fifo", "backfill"});
  REQUIRE(r.find("fifo") != nullptr);
  CHECK(r.find("fifo")->rank == 1);
  CHECK(r.find("sjf")->rank == 0);
  CHECK(r.find("fifp") == nullptr);
  CHECK(r.find("") == nullptr);
  CHECK(r.find("FIFO") == nullptr);  // names are case-sensitive
  CHECK(NameRegistry<Policy>().find("fifo") == nullptr);
  CHECK(NameRegistry<Policy>().names().empty());
}

TEST_CASE("name registry: a duplicate name is a programming error and leaves the registry as it was") {
  auto r = policies({"fifo", "sjf"});
  CHECK_THROWS_AS(r.add({"fifo", 7}), std::logic_error);
  CHECK(r.names() == std::vector<std::string>{"fifo", "sjf"});
  CHECK(r.find("fifo")->rank == 0);
  NameRegistry<Policy> in_order(NameOrder::Registration);
  in_order.add({"b", 0});
  CHECK_THROWS_AS(in_order.add({"b", 1}), std::logic_error);
}

TEST_CASE("name registry: the error for an unknown name names the path, the value, every known name and the closest") {
  const auto r = policies({"sjf", "fifo", "backfill", "priority"});
  CHECK_THROWS_AS(r.unknown("--policy", "fifp"), InputError);
  // "fifp" is one substitution from "fifo"; "sjf" and the others are further.
  CHECK(error_of([&] { r.unknown("--policy", "fifp"); }) ==
        "--policy: got \"fifp\"; expected one of backfill, fifo, priority, sjf (closest: fifo, sjf, backfill)");
  CHECK(r.expected() == "one of backfill, fifo, priority, sjf");
  CHECK(r.expected("a scheduling policy") == "a scheduling policy: backfill, fifo, priority, sjf");
  CHECK(r.closest("priorty", 1) == "closest: priority");
  CHECK(NameRegistry<Policy>().closest("fifo").empty());

  SUBCASE("the wording: what is expected, how the value shows, the hint") {
    CHECK(error_of([&] { r.unknown("/cluster/scheduler", "fifp", {.what = "a scheduling policy", .closest = 1}); }) ==
          "/cluster/scheduler: got \"fifp\"; expected a scheduling policy: backfill, fifo, priority, sjf (closest: fifo)");
    CHECK(error_of([&] { r.unknown("--policy", "fifp", {.shown = "fifp", .hint = "policies combine with a placement"}); }) ==
          "--policy: got fifp; expected one of backfill, fifo, priority, sjf (policies combine with a placement)");
    CHECK(error_of([&] { r.unknown("checkpoint method", "fifp", {.hint = ""}); }) ==
          "checkpoint method: got \"fifp\"; expected one of backfill, fifo, priority, sjf");
  }
  SUBCASE("an empty registry says so without a hint") {
    CHECK(error_of([] { NameRegistry<Policy>().unknown("--policy", "fifo"); }) == "--policy: got \"fifo\"; expected one of ");
  }
}

TEST_CASE("name registry: entries owned through pointers, named by a virtual name()") {
  NameRegistry<std::unique_ptr<Target>> r;
  r.add(std::make_unique<Volcano>());
  r.add(std::make_unique<Slurm>());
  r.add(std::make_unique<Kubeflow>());
  CHECK(r.names() == std::vector<std::string>{"kubeflow", "slurm", "volcano"});
  const std::unique_ptr<Target>* slurm = r.find("slurm");
  REQUIRE(slurm != nullptr);
  CHECK((*slurm)->name() == "slurm");
  CHECK(r.find("slurn") == nullptr);
  CHECK(error_of([&] { r.unknown("--to", "slurn", {.closest = 1}); }) ==
        "--to: got \"slurn\"; expected one of kubeflow, slurm, volcano (closest: slurm)");
  CHECK_THROWS_AS(r.add(std::make_unique<Slurm>()), std::logic_error);
  CHECK(r.entries().size() == 3);

  // Raw pointers to objects the caller keeps (pipeline schedules).
  static const Slurm slurm_target;
  static const Volcano volcano_target;
  NameRegistry<const Target*> raw(NameOrder::Registration);
  raw.add(&volcano_target);
  raw.add(&slurm_target);
  CHECK(raw.names() == std::vector<std::string>{"volcano", "slurm"});
  REQUIRE(raw.find("slurm") != nullptr);
  CHECK(*raw.find("slurm") == &slurm_target);
}

TEST_CASE("closest names: a word far longer than every known name gets no suggestion (and no quadratic work)") {
  const std::vector<std::string> known = {"fifo", "backfill", "las"};
  CHECK(closest_names("backfil", known, 1) == std::vector<std::string>{"backfill"});
  // 2 x 8 + 16 = 32 characters is the longest word still compared; a megabyte key is not.
  CHECK(closest_names(std::string(32, 'x'), known, 1).size() == 1);
  CHECK(closest_names(std::string(33, 'x'), known, 1).empty());
  CHECK(closest_names(std::string(1 << 20, 'k'), known, 3).empty());
}
