import unittest

from wordcount import count


class CountTest(unittest.TestCase):
    def test_most_frequent_first(self):
        self.assertEqual(count("b a b"), [("b", 2), ("a", 1)])

    def test_case_and_punctuation(self):
        self.assertEqual(count("It's, it's IT"), [("it's", 2), ("it", 1)])


if __name__ == "__main__":
    unittest.main()
