"""The grounding validator (real MiniLM): multi-word names, lists as one window, ranks."""

from __future__ import annotations


from bookreader.core.exact_terms import name_runs, ranks, ranks_differ

PARK = (
    "The history of Presque Isle began when Presque Isle was created by the wave action of "
    "Lake Erie over the 11,000 years since the last ice age. Presque Isle State Park is a "
    "3112 acre Pennsylvania state park on an arching, sandy peninsula that juts into Lake "
    "Erie, 4 mi west of the city of Erie."
)

ROBOTS = (
    "Humanoid robots employ multiple sensory systems to perceive their environment:\n\n"
    "1. Vision Systems: Cameras for color, depth, and motion information\n\n"
    "2. Tactile Sensing: Force/torque sensors, tactile skin for contact detection\n\n"
    "3. Proprioception: Joint encoders, IMU sensors for self-awareness\n\n"
    "4. Auditory Systems: Microphones for sound and speech recognition\n\n"
    "5. Range Sensing: LIDAR, ultrasonic sensors for distance measurement"
)

STRINGS = (
    "The problem is that the == operator checks whether the two operands refer to the same "
    "object. The correct way to compare strings is with the equals method, like this:\n\n"
    "if (answer.equals(\"yes\")) {\n\nSystem.out.println(\"Let's go!\");\n}\n\n"
    "This example invokes equals on answer and passes \"yes\" as an argument. The equals "
    "method returns true if the strings contain the same characters; otherwise, it returns "
    "false.\n\nIf two strings differ, we can use compareTo to see which comes first in "
    "alphabetical order."
)

MALLS = (
    "Mall del Norte is 1212515 sqft with over 160 stores, making it the 2nd largest mall in "
    "South Texas, and one of the largest malls in Texas overall. La Plaza Mall in McAllen, "
    "Texas is larger by 3,000 sq. feet."
)


def test_name_runs_helper():
    assert name_runs("Lake Erie State Park.") == [("lake", "erie", "state", "park")]
    assert name_runs("The Southern Railway runs to Graz") == [("southern", "railway")]
    assert name_runs("a character of Dr. Hannibal Lecter's") == [("dr", "hannibal", "lecter")]
    assert name_runs("In Java, Strings are immutable.") == []  # a comma splits a run


def test_a_multi_word_name_must_occur_as_written(validator):
    v = validator.validate("Lake Erie State Park is a 3112 acre Pennsylvania state park.", PARK)
    assert not v.passed and "lake erie state park" in v.missing_terms
    v = validator.validate("Presque Isle State Park is a 3112 acre park that juts into Lake Erie.",
                           PARK)
    assert v.passed, v


def test_a_sentence_that_sums_up_a_list_is_judged_against_the_whole_list(validator):
    answer = ("Humanoid robots perceive their surroundings with several sensory systems, such as "
              "cameras, tactile sensors, joint encoders, microphones and LIDAR.")
    assert validator.validate(answer, ROBOTS).passed
    # Without the list's items the same answer names things the header does not.
    header = ROBOTS.split("\n\n")[0]
    assert not validator.validate(answer, header).passed


def test_a_term_of_another_item_put_in_an_item_fails(validator):
    v = validator.validate("Humanoid robots use microphones for distance measurement.", ROBOTS)
    assert not v.passed, v


def test_prose_or_code_after_a_colon_is_not_a_list(validator):
    # The header "... with the equals method, like this:" is followed by code and prose:
    # compareTo, named further down, must not be attached to the header's claim.
    v = validator.validate("The correct way to compare strings is with the compareTo method.",
                           STRINGS)
    assert not v.passed, v
    v = validator.validate("The correct way to compare strings is with the equals method.",
                           STRINGS)
    assert v.passed, v


def test_ranks_helper():
    assert ranks("making it the 2nd largest mall") == {"largest": {"2"}}
    assert ranks("the largest mall") == {"largest": {"1"}}
    assert ranks("one of the largest malls") == {"largest": {"some"}}
    assert ranks("the second-most popular language") == {"most popular": {"2"}}
    assert ranks_differ(ranks("It is the largest mall."), ranks("It is the 2nd largest mall."))
    assert not ranks_differ(ranks("It is the second largest mall."),
                            ranks("It is the 2nd largest mall."))
    assert not ranks_differ(ranks("It is big."), ranks("It is the 2nd largest mall."))


def test_a_superlative_must_keep_its_rank(validator):
    v = validator.validate("Mall del Norte is the largest mall in South Texas.", MALLS)
    assert not v.passed, v
    v = validator.validate("Mall del Norte is the second largest mall in South Texas.", MALLS)
    assert v.passed, v


def test_list_groups_helper():
    from bookreader.core.exact_terms import list_groups

    sents = ["Robots use sensors:", "1.", "Vision: cameras", "2.", "Touch: skin", "Done."]
    assert list_groups(sents) == [(0, 1, 2, 3, 4)] * 5 + [()]
    assert list_groups(["Like this:", "if (x) {", "}"]) == [(), (), ()]
    assert list_groups(["Items:", "\u2022 one thing", "\u2022 another"])[0] == (0, 1, 2)
