// Unit strings: each expected value follows from the unit's definition (SI / IEC prefixes, 8 bits a byte).
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include "models/core/units.hpp"

using namespace trainsim;

TEST_CASE("sizes keep GB and GiB apart") {
  CHECK(*parse_quantity("80GiB", Quantity::Bytes) == trainsim::test::approx(80.0 * 1073741824.0));
  CHECK(*parse_quantity("141GB", Quantity::Bytes) == trainsim::test::approx(141e9));
  CHECK(*parse_quantity("81559MiB", Quantity::Bytes) == trainsim::test::approx(81559.0 * 1048576.0));
  CHECK(*parse_quantity(" 1.5 TiB ", Quantity::Bytes) == trainsim::test::approx(1.5 * 1099511627776.0));
  CHECK(*parse_quantity("1024", Quantity::Bytes) == trainsim::test::approx(1024));
}

TEST_CASE("bandwidths in bytes and bits per second") {
  CHECK(*parse_quantity("3.35TB/s", Quantity::Bandwidth) == trainsim::test::approx(3.35e12));
  CHECK(*parse_quantity("400Gbps", Quantity::Bandwidth) == trainsim::test::approx(50e9));  // 400e9 bits / 8
  CHECK(*parse_quantity("200Gb/s", Quantity::Bandwidth) == trainsim::test::approx(25e9));
  CHECK(*parse_quantity("450GB/s", Quantity::Bandwidth) == trainsim::test::approx(450e9));
}

TEST_CASE("FLOP rates, counts, durations, power, money") {
  CHECK(*parse_quantity("989TFLOPS", Quantity::FlopRate) == trainsim::test::approx(989e12));
  CHECK(*parse_quantity("1.5T", Quantity::Count) == trainsim::test::approx(1.5e12));
  CHECK(*parse_quantity("8B", Quantity::Count) == trainsim::test::approx(8e9));
  CHECK(*parse_quantity("2h", Quantity::Time) == trainsim::test::approx(7200));
  CHECK(*parse_quantity("30min", Quantity::Time) == trainsim::test::approx(1800));
  CHECK(*parse_quantity("54d", Quantity::Time) == trainsim::test::approx(54 * 86400.0));
  CHECK(*parse_quantity("700W", Quantity::Power) == trainsim::test::approx(700));
  CHECK(*parse_quantity("$2.5", Quantity::Money) == trainsim::test::approx(2.5));
  CHECK(*parse_quantity("10%", Quantity::Fraction) == trainsim::test::approx(0.1));
}

TEST_CASE("a unit of the wrong kind is refused with the reason") {
  std::string why;
  CHECK_FALSE(parse_quantity("80GiB", Quantity::Bandwidth, &why));
  CHECK(why.find("GiB") != std::string::npos);
  CHECK_FALSE(parse_quantity("fast", Quantity::Bandwidth, &why));
  CHECK(why == "no number at the start");
  CHECK_FALSE(parse_quantity("80 GiBs", Quantity::Bytes));
}

TEST_CASE("numbers beyond a double are named as such, not as missing") {
  std::string why;
  CHECK_FALSE(parse_quantity("1e400", Quantity::Count, &why));
  CHECK(why == "the number is beyond the range of a double");
  CHECK_FALSE(parse_quantity("nan", Quantity::Count, &why));
  CHECK(why == "not a finite number");
  CHECK_FALSE(parse_quantity("inf GB", Quantity::Bytes, &why));
}
