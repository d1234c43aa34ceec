// Unit strings: each expected value follows from the unit's definition (SI / IEC prefixes, 8 bits a byte).
#include <doctest/doctest.h>

#include "models/units.hpp"

using namespace trainsim;

TEST_CASE("sizes keep GB and GiB apart") {
  CHECK(*parse_quantity("80GiB", Quantity::Bytes) == doctest::Approx(80.0 * 1073741824.0));
  CHECK(*parse_quantity("141GB", Quantity::Bytes) == doctest::Approx(141e9));
  CHECK(*parse_quantity("81559MiB", Quantity::Bytes) == doctest::Approx(81559.0 * 1048576.0));
  CHECK(*parse_quantity(" 1.5 TiB ", Quantity::Bytes) == doctest::Approx(1.5 * 1099511627776.0));
  CHECK(*parse_quantity("1024", Quantity::Bytes) == doctest::Approx(1024));
}

TEST_CASE("bandwidths in bytes and bits per second") {
  CHECK(*parse_quantity("3.35TB/s", Quantity::Bandwidth) == doctest::Approx(3.35e12));
  CHECK(*parse_quantity("400Gbps", Quantity::Bandwidth) == doctest::Approx(50e9));  // 400e9 bits / 8
  CHECK(*parse_quantity("200Gb/s", Quantity::Bandwidth) == doctest::Approx(25e9));
  CHECK(*parse_quantity("450GB/s", Quantity::Bandwidth) == doctest::Approx(450e9));
}

TEST_CASE("FLOP rates, counts, durations, power, money") {
  CHECK(*parse_quantity("989TFLOPS", Quantity::FlopRate) == doctest::Approx(989e12));
  CHECK(*parse_quantity("1.5T", Quantity::Count) == doctest::Approx(1.5e12));
  CHECK(*parse_quantity("8B", Quantity::Count) == doctest::Approx(8e9));
  CHECK(*parse_quantity("2h", Quantity::Time) == doctest::Approx(7200));
  CHECK(*parse_quantity("30min", Quantity::Time) == doctest::Approx(1800));
  CHECK(*parse_quantity("54d", Quantity::Time) == doctest::Approx(54 * 86400.0));
  CHECK(*parse_quantity("700W", Quantity::Power) == doctest::Approx(700));
  CHECK(*parse_quantity("$2.5", Quantity::Money) == doctest::Approx(2.5));
  CHECK(*parse_quantity("10%", Quantity::Fraction) == doctest::Approx(0.1));
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
